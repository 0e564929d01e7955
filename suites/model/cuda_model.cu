#include "suites/model/cuda_model.h"
