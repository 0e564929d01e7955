#include "suites/model/host_model.h"
