// The coordinator's PostgreSQL storage (coordinator/store/): the Store that
// combines one repository per concern, and the records they read and write.
#pragma once

#include "coordinator/store/store.h"
