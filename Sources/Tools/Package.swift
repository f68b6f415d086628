// swift-tools-version:6.0
// pymetal's Swift command-line tools, linked against libPyMetal (the dynamic
// library Python loads) and calling only its C ABI (pymetal.h).
//
// They are a package of their own because SwiftPM links a dynamic library
// *product* only into targets of other packages: a target of the package that
// declares the product gets the product's targets linked in statically, and a
// target cannot depend on a product of its own package (not implemented:
// swiftlang/swift-package-manager#7331; Swift 6.3 says "unknown package"). As a
// dependency, the product orders the link (libPyMetal first) and adds the
// rpath ($ORIGIN on Linux, @loader_path on macOS) that finds the library beside the tool.
//
// Build from the checkout, into the root package's build folder (so the tool
// sits next to the libPyMetal that Python loads; `make build` does this):
//   swift build -c release --package-path Sources/Tools --scratch-path .build
//   swift build -c release --disable-build-manifest-caching
// The second command builds the rest of the root package (pymetal-metallib) and
// leaves the folder with the root's build plan: a plain `swift build` in a
// folder shared with another package reuses that package's plan if it was the
// last one (the package manifests it checks are unchanged).
import PackageDescription

let package = Package(
    name: "pymetal-tools",
    platforms: [.macOS(.v14)],
    products: [.executable(name: "pymetal-info", targets: ["pymetal-info"])],
    dependencies: [.package(name: "pymetal", path: "../..")],
    targets: [
        .executableTarget(name: "pymetal-info", dependencies: [.product(name: "PyMetal", package: "pymetal")],
                          path: "pymetal-info"),
    ],
    swiftLanguageModes: [.v5]
)
