// Umbrella header for native applications: load, predict, train.
#pragma once

#include "rebelboost/error.hpp"
#include "rebelboost/io.hpp"
#include "rebelboost/matrix_view.hpp"
#include "rebelboost/model.hpp"
#include "rebelboost/predict.hpp"
#include "rebelboost/train.hpp"
#include "rebelboost/version.hpp"
