/* Distributed simulator internals: the policies' role configurations (hrm/dsetup.h). */
#ifndef HRM_DSIM_PRIVATE_H
#define HRM_DSIM_PRIVATE_H

#include "hrm/dsetup.h"
#include "hrm/dsim.h"

#endif
