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
// sits next to the libPyMetal that `swift build` made; `make build` does this):
//   swift build -c release --package-path Tools --scratch-path .build
import PackageDescription

let package = Package(
    name: "pymetal-tools",
    platforms: [.macOS(.v14)],
    products: [.executable(name: "pymetal-info", targets: ["pymetal-info"])],
    dependencies: [.package(name: "pymetal", path: "..")],
    targets: [
        .executableTarget(name: "pymetal-info", dependencies: [.product(name: "PyMetal", package: "pymetal")],
                          path: "pymetal-info"),
    ],
    swiftLanguageModes: [.v5]
)
