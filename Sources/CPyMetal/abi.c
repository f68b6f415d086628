// The C target that carries include/pymetal.h, the one definition of
// libPyMetal's types and constants: Swift imports it (module CPyMetal) and the
// @_cdecl functions of Sources/PyMetal implement the prototypes.
#include "pymetal.h"
