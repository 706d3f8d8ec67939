// Evaluates a scenario's expectations (lesson checks) on a trace.
#pragma once

#include "result.h"
#include "scenario.h"
#include "trace.h"

#include <string>
#include <vector>

namespace streamscope {

struct CheckResult {
    Expectation expectation;
    bool passed = false;
    double actual = 0;
    std::string description; // "overlap(s1, s2) = 0.93 >= 0.8"
    std::string error;       // set when the metric could not be computed (unknown stream, ...): counts as failed
};

// Metrics an expectation may name, with a one-line description each.
std::vector<std::pair<std::string, std::string>> expectationMetrics();
// Checks that an expectation is well-formed (known metric, arguments present, known op); message on failure.
std::string validateExpectation(const Expectation& e);
std::vector<CheckResult> evaluateExpectations(const Trace& trace, const std::vector<Expectation>& expect);
// Computes the value of one expectation's metric; error message in the result when it cannot.
Result<double> evaluateMetric(const Trace& trace, const Expectation& e);
bool allPassed(const std::vector<CheckResult>& results);

} // namespace streamscope
