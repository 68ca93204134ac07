// A deliberately forbidden include: hardware/ may use core/ only, so the layer check must fail on
// this file (CTest architecture.forbidden_include_is_caught, which expects the failure).
#pragma once

#include "training/simulator.h"
