// Only here so that SwiftPM builds the module that exports pm_kernel_abi.h.
