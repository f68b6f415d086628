// What a Metal source holds besides compute kernels that bind buffers: vertex and fragment functions,
// kernels that bind textures or samplers, and the struct members' stage attributes (`[[position]]`,
// `[[user(locn0)]]`, `[[attribute(0)]]`) of the types they pass. Apple's samples and many projects keep
// them in one file with their compute kernels; MetalCPU runs compute kernels that bind buffers, so the
// file must compile and the others fail only where they are used, as the Mac's Metal would refuse a
// vertex function in a compute pipeline:
// - such an entry point's declaration becomes a kernel of the same name, without parameters, whose body
//   reports what it is (pm::rt::refused_entry_point, pm_msl/texture.h): the library lists it, as Metal's
//   functionNames does, and dispatching it raises that error;
// - stage attributes of struct members are removed (they say how a render pipeline feeds the member);
// - textures and samplers are declared (pm_msl/texture.h), so that helper functions taking them compile.
extension FrontEnd {
    /// Attributes of a struct member that only a render pipeline reads (Metal Shading Language
    /// specification, "Attributes for Vertex Function Input / Output, Fragment Function Input / Output"),
    /// and the argument-buffer member indices (`[[id(n)]]`).
    static let stageAttributes: Set<String> = [
        "position", "user", "attribute", "flat", "center_perspective", "center_no_perspective",
        "centroid_perspective", "centroid_no_perspective", "sample_perspective", "sample_no_perspective",
        "point_size", "clip_distance", "color", "depth", "stencil", "render_target_array_index",
        "viewport_array_index", "sample_mask", "primitive_id", "invariant", "raster_order_group", "id",
        "texture", "sampler", "shared", "primitive_culled",
    ]
    /// The types of texture and sampler parameters (whose [[texture(n)]] / [[sampler(n)]] Metal may assign).
    static let textureTypes: Set<String> = [
        "texture1d", "texture1d_array", "texture2d", "texture2d_array", "texture3d", "texturecube",
        "texturecube_array", "texture2d_ms", "texture2d_ms_array", "texture_buffer", "depth2d", "depth2d_array",
        "depthcube", "depthcube_array", "depth2d_ms", "depth2d_ms_array", "sampler",
    ]
    static let resourceAttributes: Set<String> = ["texture", "sampler", "stage_in", "imageblock_data"]

    /// A vertex or fragment function, or a kernel binding a texture or sampler, declared at `start` (a
    /// namespace-scope declaration whose head ends at `headEnd`): what it is and its name's token. Templates
    /// are left to the kernel path (their instantiations name them).
    func refusedEntryPoint(_ start: Int, headEnd: Int) -> (what: String, name: Int)? {
        guard text(start) != "template" else { return nil }
        var stage: String? = nil
        var isKernel = false
        var i = start
        var open: Int? = nil
        while i < headEnd {
            if let close = attributeEnd(i) {
                for attribute in parseAttributes(i, close) {
                    if ["vertex", "fragment"].contains(attribute.name) { stage = attribute.name }
                    if attribute.name == "kernel" { isKernel = true }
                }
                i = close + 1
                continue
            }
            if tokens[i].kind == .identifier {
                switch text(i) {
                case "vertex", "fragment": stage = text(i)
                case "kernel": isKernel = true
                default: break
                }
            }
            if isPunct(i, 40) { open = i; break }
            if isPunct(i, 60) { return nil } // template arguments in the head: the kernel path's
            i += 1
        }
        guard let open, open > start, tokens[open - 1].kind == .identifier,
              !["operator", "kernel", "vertex", "fragment"].contains(text(open - 1)) else { return nil }
        if let stage { return ("a \(stage) function", open - 1) }
        guard isKernel else { return nil }
        let close = matching(open)
        var j = open + 1
        while j < close {
            if let end = attributeEnd(j) {
                if let bound = parseAttributes(j, end).first(where: { Self.resourceAttributes.contains($0.name) }) {
                    return ("a kernel with a [[\(bound.name)]] parameter", open - 1)
                }
                j = end + 1
                continue
            }
            if tokens[j].kind == .identifier, Self.textureTypes.contains(text(j)) {
                return ("a kernel with a \(text(j)) parameter", open - 1)
            }
            j += 1
        }
        return nil
    }

    /// Replaces the declaration [start, end] of a refused entry point by a kernel without parameters that
    /// reports it; a prototype goes.
    func refuse(_ entry: (what: String, name: Int), start: Int, end: Int, hasBody: Bool) {
        let name = text(entry.name)
        refusedRanges.append(start...end)
        guard hasBody else { remove(start, through: end); return }
        if kernels.contains(where: { $0.hostName == name }) {
            error(entry.name, "a function named '\(name)' is already defined in this library; rename one")
            return
        }
        remove(start, through: end, replacement: "void \(name)() { ::pm::rt::refused_entry_point(\"\(name)\", \"\(entry.what)\"); }")
        edits.append((tokens[start].start..<tokens[start].start, KernelMarkers.begin(kernels.count)))
        edits.append((tokens[end].end..<tokens[end].end, KernelMarkers.end(kernels.count)))
        kernels.append(Kernel(hostName: name, function: declaratorSource([entry.name]), bindings: [], maxTotalThreads: 0))
    }

    /// Removes the stage attributes of struct members (stageAttributes) in the user's code outside
    /// parentheses (a kernel's parameters were read before: of two edits at one place the first made wins),
    /// and `[[function_constant(c)]]` on a struct member (a vertex function's output that exists when c is
    /// true: the member is kept, as its type's layout matters to no buffer).
    func removeStageAttributes() {
        var parens = 0
        var classBodies: [Bool] = [] // per open `{`: whether it opens a struct, class or union body
        var j = 0
        while j < tokens.count {
            if isPunct(j, 40) { parens += 1 } else if isPunct(j, 41) { parens -= 1 }
            if isPunct(j, 123) { classBodies.append(opensClassBody(j)) } else if isPunct(j, 125) { _ = classBodies.popLast() }
            if parens == 0, isUser(j), let end = attributeEnd(j) {
                let attributes = parseAttributes(j, end)
                func stage(_ attribute: Attribute) -> Bool {
                    Self.stageAttributes.contains(attribute.name)
                        || (attribute.name == "function_constant" && classBodies.last == true)
                }
                if attributes.contains(where: stage) {
                    let kept = attributes.filter { !stage($0) }.map(attributeSource)
                    remove(j, through: end, replacement: kept.isEmpty ? "" : "[[\(kept.joined(separator: ", "))]]")
                }
                j = end + 1
                continue
            }
            j += 1
        }
    }

    /// Whether the `{` at `open` opens a struct, class or union body: the keyword is in its head.
    private func opensClassBody(_ open: Int) -> Bool {
        var j = open - 1
        while j >= 0, !isPunct(j, 59), !isPunct(j, 123), !isPunct(j, 125), !isPunct(j, 41), !isPunct(j, 61) {
            if tokens[j].kind == .identifier, ["struct", "class", "union"].contains(text(j)) { return true }
            j -= 1
        }
        return false
    }

    /// The value of enumerator `name` of the user's enums (`enum Index { A = 0, B, C = B + 2 }`, also
    /// `enum class E : int`, NS_ENUM as Apple's shared headers expand it): Apple's samples index their
    /// buffers with them, `[[buffer(AAPLVertexInputIndexVertices)]]`. Read once, in source order; an
    /// enumerator whose value is no integer expression (integerExpression) ends its enum's list.
    func enumeratorValue(_ name: String) -> Int? {
        if enumerators == nil {
            enumerators = [:]
            var i = 0
            while i < tokens.count {
                defer { i += 1 }
                guard tokens[i].kind == .identifier, text(i) == "enum", isUser(i) else { continue }
                var open = i + 1
                while open < tokens.count, !isPunct(open, 123), !isPunct(open, 59) { open += 1 }
                guard isPunct(open, 123) else { continue }
                let close = matching(open)
                var next = 0
                var j = open + 1
                while j < close, tokens[j].kind == .identifier {
                    let enumerator = text(j)
                    j += 1
                    if isPunct(j, 61) {
                        var k = j + 1
                        while k < close, !isPunct(k, 44) { k += 1 }
                        var at = j + 1
                        guard let value = integerConstant(&at, k), at == k else { break }
                        next = value
                        j = k
                    }
                    enumerators![enumerator] = next
                    next += 1
                    if isPunct(j, 44) { j += 1 } else { break }
                }
                i = close
            }
        }
        return enumerators![name]
    }
}
