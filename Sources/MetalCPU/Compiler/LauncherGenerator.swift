// The C++ appended to a kernel library: a launcher per kernel (pm::rt::run
// instantiated with the kernel and its bindings), the binding tables, and the
// two exported symbols MetalCPU reads (see pm_kernel_abi.h).
enum LauncherGenerator {
    static func generate(_ kernels: [Kernel], constants: [FunctionConstant] = []) -> String {
        var out = "\n# 1 \"metalcpu_launchers\"\nnamespace pm_generated {\n"
        var entries: [String] = []
        var tables: [String] = []
        for (index, kernel) in kernels.enumerated() {
            let mode = kernel.lockstep ? "PM_KERNEL_LOCKSTEP" : kernel.usesFibers ? "PM_KERNEL_FIBERS" : "PM_KERNEL_LOOP"
            let binds = kernel.bindings.map { binding -> String in
                switch binding.kind {
                case .buffer: return "::pm::rt::bind<::pm::rt::attr::buffer, \(binding.index)>"
                case .threadgroup: return "::pm::rt::bind<::pm::rt::attr::threadgroup, \(binding.index)>"
                case let .position(name): return "::pm::rt::bind<::pm::rt::attr::\(name), 0>"
                }
            }
            let runner = (["&" + kernel.function, mode] + binds).joined(separator: ", ")
            var sites = "nullptr"
            if !kernel.sites.isEmpty {
                out += "static const int sites_\(index)[] = {\(kernel.sites.map(String.init).joined(separator: ", "))};\n"
                sites = "sites_\(index)"
            }
            entries.append("  {\(quoted(kernel.hostName)), &::pm::rt::run<\(runner)>, \(mode), \(kernel.maxThreadsExpression.map { "(uint32_t)(\($0))" } ?? "\(kernel.maxTotalThreads)"), \(sites), \(kernel.sites.count)}")
            // an absent optional parameter (KernelBinding.absent) is called with a null pointer: no row
            let rows = kernel.bindings.enumerated().filter { !$0.element.absent }.map { (position, binding) -> String in
                func fact(_ name: String) -> String { "::pm::abi::param_\(name)<&\(kernel.function), \(position)>()" }
                let names = "\(quoted(binding.name)), \(quoted(binding.typeText))"
                switch binding.kind {
                case .buffer:
                    return "{PM_BIND_BUFFER, \(binding.index), \(fact("bytes")), \(fact("flags")), \(fact("type")), \(fact("size")), \(names)}"
                case .threadgroup:
                    return "{PM_BIND_THREADGROUP, \(binding.index), \(fact("bytes")), 0, \(fact("type")), \(fact("size")), \(names)}"
                case .position: return "{PM_BIND_POSITION, 0, 0, 0, 0, 0, \(names)}"
                }
            }
            if rows.isEmpty {
                tables.append("{nullptr, 0}")
            } else {
                out += "static const pm_binding bindings_\(index)[] = {\(rows.joined(separator: ", "))};\n"
                tables.append("{pm_generated::bindings_\(index), \(rows.count)}")
            }
        }
        let count = kernels.count
        if count == 0 {
            out += "static const ::pm::rt::kernel_entry *const entries = nullptr;\n"
            tables.append("{nullptr, 0}")
        } else {
            out += "static const ::pm::rt::kernel_entry entries[] = {\n\(entries.joined(separator: ",\n"))\n};\n"
        }
        out += "} // namespace pm_generated\n"
        if !constants.isEmpty {
            // One pm_function_constant row per constant: which kernels use its value.
            let rows = constants.map { constant -> String in
                let users = kernels.filter { $0.constants.contains(constant.index) }.map { $0.hostName + "\n" }.joined()
                return "{\(quoted(constant.name)), \(constant.index), ::pm::abi::data_type<decltype(\(constant.qualifiedName))>(), "
                    + "\(quoted(users))}"
            }
            out += "extern \"C\" __attribute__((visibility(\"default\"))) const pm_function_constant pm_cpu_function_constants[] = "
                + "{\(rows.joined(separator: ", ")), {nullptr, 0, 0, nullptr}};\n"
        }
        out += "extern \"C\" __attribute__((visibility(\"default\"))) const pm_kernel_bindings pm_cpu_bindings[] = {\(tables.joined(separator: ", "))};\n"
        out += "extern \"C\" __attribute__((visibility(\"default\"))) uint32_t pm_cpu_library(const pm_kernel_desc **kernels, uint32_t *count) {\n"
        out += "  return ::pm::rt::library(pm_generated::entries, \(count), kernels, count);\n}\n"
        return out
    }

    private static func quoted(_ s: String) -> String {
        "\"" + s.replacing("\\", with: "\\\\").replacing("\"", with: "\\\"").replacing("\n", with: "\\n") + "\""
    }
}
