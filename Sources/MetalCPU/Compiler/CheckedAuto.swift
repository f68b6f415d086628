// Validation builds: `auto *` declarations initialised from a checked pointer. A buffer or threadgroup
// pointer parameter is a class there (`::pm::rt::vptr`, checkedPointer), from which `auto *p = x;`
// cannot deduce (MLX's gemv.h: `const constant auto* s = strides;`). Such a declaration becomes
// `auto p = ::pm::rt::vauto<C>(x);` (runtime_validation.h): a checked pointer stays checked, its
// element const where `const`/`constant` stood before the `*` (C); from a plain pointer it deduces
// what `auto *` did. A `const` after the `*` (the pointer itself) is kept: `auto const p`. `auto p`,
// `decltype(x)` deduce from the class as they are; `auto &r = x;` becomes `auto &&r` (below). Not rewritten: several declarators
// (`auto *a = x, *b = y;`), `auto **`, range-for and parameters (`auto *` without `=`).
extension FrontEnd {
    func rewriteCheckedAutoPointers() {
        guard validation else { return }
        let qualifiers: Set<String> = ["const", "volatile", "device", "constant", "thread", "threadgroup"]
        for i in tokens.indices where tokens[i].kind == .identifier && text(i) == "auto"
            && !src.files[Int(tokens[i].file)].isSystem {
            // the qualifiers around `auto`, then one `*`
            var first = i
            while first > 0, tokens[first - 1].kind == .identifier, qualifiers.contains(text(first - 1)) { first -= 1 }
            guard first == 0 || isPunct(first - 1, 59) || isPunct(first - 1, 123) || isPunct(first - 1, 125)
                    || isPunct(first - 1, 40) else { continue } // a declaration statement or a for's first clause
            var star = i + 1
            while star < tokens.count, tokens[star].kind == .identifier, qualifiers.contains(text(star)) { star += 1 }
            // `auto &r = p[i];`: a row of a multi-dimensional threadgroup array is a checked view, a
            // temporary: `auto &&r` binds it as `auto &` binds an lvalue (the same reference for one)
            if star == i + 1, first == i, isPunct(star, 38), tokens[star + 1].kind == .identifier, isPunct(star + 2, 61),
               !isPunct(star + 3, 61) {
                remove(star, through: star, replacement: "&&")
                compileOnly.insert(edits[edits.count - 1].range)
                continue
            }
            guard isPunct(star, 42) else { continue }
            var name = star + 1
            if name < tokens.count, tokens[name].kind == .identifier, text(name) == "const" { name += 1 }
            guard name + 1 < tokens.count, tokens[name].kind == .identifier, isPunct(name + 1, 61),
                  !isPunct(name + 2, 61) else { continue }
            // the initialiser: to the `;` ending the declaration (not a `,`: several declarators are left)
            var end = name + 2
            while end < tokens.count, !isPunct(end, 59), !isPunct(end, 44), !isPunct(end, 41), !isPunct(end, 125) {
                if isPunct(end, 40) || isPunct(end, 91) || isPunct(end, 123) { end = matching(end) }
                end += 1
            }
            guard end < tokens.count, isPunct(end, 59) else { continue }
            var constElement = false
            // the cv-qualifiers go (made before removeAddressSpaces, this edit of `constant` wins); the
            // other address spaces go as everywhere (removeAddressSpaces, stripThreadgroup)
            for j in first..<star where ["const", "constant", "volatile"].contains(text(j)) {
                if text(j) != "volatile" { constElement = true }
                remove(j, through: j)
            }
            remove(star, through: star)
            compileOnly.insert(edits[edits.count - 1].range)
            let open = tokens[name + 2].start, close = tokens[end].start
            edits.append((open..<open, "::pm::rt::vauto<\(constElement)>("))
            compileOnly.insert(open..<open)
            edits.append((close..<close, ")"))
            compileOnly.insert(close..<close)
        }
    }
}
