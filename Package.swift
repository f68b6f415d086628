// swift-tools-version:6.0
// pymetal: GPU compute for Python on Apple Silicon through Metal.
// On macOS the engine imports Apple's Metal; on Linux it imports MetalCPU,
// a module of this package that implements the same Metal API subset and runs
// MSL kernels on the CPU (see ../shared/metal-api.md for the contract).
// Tools 6.0 (Xcode 16): the macOS 15 SDK has MTLCompileOptions.mathMode and
// Swift 5.10+ has nonisolated(unsafe), both used here; the sources stay in the
// Swift 5 language mode (swiftLanguageModes below).
// macOS 14: pymetal's shaders use bfloat, MSL 3.1 (scripts/build_shaders.sh).
import PackageDescription

let linuxOnly = TargetDependencyCondition.when(platforms: [.linux])

// Release builds skip Swift's run-time exclusivity checks in the per-dispatch
// path (dozens of class-property accesses per dispatch, ~80 instructions each);
// debug builds, which `swift test` runs, keep them.
let fastAccess: [SwiftSetting] = [.unsafeFlags(["-enforce-exclusivity=unchecked"], .when(configuration: .release))]

let package = Package(
    name: "pymetal",
    platforms: [.macOS(.v14)],
    products: [
        // The only thing Python loads: the C ABI (libPyMetal.so / libPyMetal.dylib).
        .library(name: "PyMetal", type: .dynamic, targets: ["PyMetal"]),
        .executable(name: "pymetal-metallib", targets: ["pymetal-metallib"]),
    ],
    targets: [
        // C ABI (@_cdecl, pm_ prefix). Public header: Sources/CPyMetal/include/pymetal.h
        .target(
            name: "PyMetal",
            dependencies: ["PyMetalCore", "CPyMetal"],
            swiftSettings: fastAccess,
            // Find the Swift runtime next to the toolchain's libraries without env vars.
            linkerSettings: [.unsafeFlags(["-Xlinker", "-rpath", "-Xlinker", "$ORIGIN"], .when(platforms: [.linux]))]
        ),
        // The engine: written only against Metal's Swift API.
        .target(
            name: "PyMetalCore",
            dependencies: [.target(name: "MetalCPU", condition: linuxOnly)],
            swiftSettings: fastAccess
        ),
        // Linux only: Metal's API running MSL on the CPU.
        .target(
            name: "MetalCPU",
            dependencies: ["CMetalCPU"],
            exclude: ["MSL"],
            swiftSettings: fastAccess
        ),
        // pymetal.h: the C ABI's types and constants, imported by PyMetal.
        .target(name: "CPyMetal"),
        // The C layout shared by MetalCPU and the kernel libraries it compiles.
        .target(name: "CMetalCPU"),
        .executableTarget(
            name: "pymetal-metallib",
            dependencies: ["PyMetalCore", .target(name: "MetalCPU", condition: linuxOnly)]
        ),
        .testTarget(name: "MetalCPUTests", dependencies: ["MetalCPU"], path: "tests/swift/MetalCPUTests"),
        .testTarget(name: "PyMetalCoreTests", dependencies: ["PyMetalCore", "PyMetal", "CPyMetal"], path: "tests/swift/PyMetalCoreTests"),
    ],
    swiftLanguageModes: [.v5]
)
