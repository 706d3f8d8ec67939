// Scenario variants: reading a document's "variants" (ids, "set" pointers, expectations, effects), and applying one
// variant's assignments to the document before it is read (scenario_json_internal.h).
#include "scenario_json_internal.h"

#include "diagnostics.h"
#include "expect.h"
#include "json_strict.h"

namespace streamscope::scenario_json {

// Checks that each key of a variant's "set" is a JSON pointer a variant may assign. Whether the target's
// parent exists is known only when the variant is applied (an earlier assignment may create it).
void ScenarioReader::checkSetPointers(const Json& set, const std::string& setPath) const
{
    for (const auto& item : set.items()) {
        const std::string& pointer = item.key();
        const std::string p = child(setPath, pointer);
        if (pointer.empty())
            fail(p, "a variant cannot replace the whole scenario; set its parts (\"/threads/0/repeat\")");
        try {
            const Json::json_pointer ptr(pointer);
            (void)ptr;
        } catch (const Json::exception& e) {
            fail(p, "not a JSON pointer: " + jsonQuoted(pointer) + " (" + plainMessage(e.what()) + ")");
        }
        if (pointer == "/variants" || pointer.starts_with("/variants/"))
            fail(p, "a variant cannot change the variants");
    }
}

// Stream names an expectation of this variant may use: the scenario's, and those its "set" brings in.
std::set<std::string> ScenarioReader::variantStreamNames(const Json& set) const
{
    std::set<std::string> names = streamNames();
    std::vector<const Json*> pending;
    for (const auto& item : set.items()) {
        if (!item.key().starts_with("/streams"))
            continue;
        if (item.key().ends_with("/name") && item.value().is_string())
            names.insert(item.value().get<std::string>());
        pending.push_back(&item.value());
    }
    while (!pending.empty()) {
        const Json* v = pending.back();
        pending.pop_back();
        if (v->is_object()) {
            if (const Json* n = find(*v, "name"); n && n->is_string())
                names.insert(n->get<std::string>());
        }
        if (v->is_array()) {
            for (const auto& e : *v)
                pending.push_back(&e);
        }
    }
    return names;
}

// "effect": the id of a diagnostic rule.
std::string ScenarioReader::readEffect(const Json& object, const std::string& path)
{
    const std::string effect = optionalString(object, "effect", path);
    if (effect.empty() || findDiagnosticRule(effect))
        return effect;
    std::vector<std::string> ids;
    for (const auto& r : diagnosticRules())
        ids.emplace_back(r.id);
    fail(child(path, "effect"),
         "unknown effect " + jsonQuoted(effect) + hint(effect, ids)
             + ": an effect is the id of an analysis rule (streamscope-cli analyze)");
}

void ScenarioReader::readVariants(const Json& root)
{
    const Json* variants = find(root, "variants");
    if (!variants)
        return;
    expectArray(*variants, "/variants");
    std::unordered_map<std::string, size_t> ids;
    for (size_t i = 0; i < variants->size(); ++i) {
        const std::string path = child("/variants", i);
        const Json& v = (*variants)[i];
        expectObject(v, path);
        checkFields(v, path, kVariantFields);
        Variant variant;
        variant.id = readName(required(v, "id", path), child(path, "id"), "a variant's id");
        if (auto [it, inserted] = ids.emplace(variant.id, i); !inserted)
            fail(child(path, "id"),
                 "duplicate variant id " + jsonQuoted(variant.id) + " (also at " + child("/variants", it->second)
                     + ")");
        variant.title = optionalString(v, "title", path);
        variant.description = optionalString(v, "description", path);
        variant.effect = readEffect(v, path);
        const Json* set = find(v, "set");
        if (set) {
            expectObject(*set, child(path, "set"));
            checkSetPointers(*set, child(path, "set"));
            variant.patchJson = dumpJson(*set);
        }
        if (const Json* e = find(v, "expect")) {
            variant.expect = readExpectations(*e, child(path, "expect"),
                                              expectStreamNames(set ? variantStreamNames(*set) : streamNames()));
            variant.hasExpect = true;
        }
        m_scenario.variants.push_back(std::move(variant));
    }
}

// The index of the variant with this id in the document, or -1.
int findVariant(const Json& root, const std::string& id, std::vector<std::string>& known)
{
    const auto it = root.find("variants");
    if (it == root.end() || !it->is_array())
        return -1;
    int found = -1;
    for (size_t i = 0; i < it->size(); ++i) {
        const Json& v = (*it)[i];
        if (!v.is_object())
            continue;
        const auto idIt = v.find("id");
        if (idIt == v.end() || !idIt->is_string())
            continue;
        known.push_back(idIt->get<std::string>());
        if (found < 0 && known.back() == id)
            found = int(i);
    }
    return found;
}

bool isArrayIndex(const std::string& token, size_t& index)
{
    if (token.empty() || (token.size() > 1 && token[0] == '0'))
        return false;
    int64_t n = 0;
    if (!parseDecimal(token, n) || n < 0)
        return false;
    index = size_t(n);
    return true;
}

// Replaces the value at the rest of the tokens under `node`, for every element or member where a token is "*";
// only values that exist are replaced. Without a value, only counts the matches. Recursion is bounded by the
// document's depth.
void assignWhereExists(Json& node, const std::vector<std::string>& tokens, size_t i, const Json* value, size_t& count)
{
    const auto visit = [&](Json& next) {
        if (i + 1 == tokens.size()) {
            if (value)
                next = *value;
            ++count;
        } else {
            assignWhereExists(next, tokens, i + 1, value, count);
        }
    };
    const std::string& token = tokens[i];
    size_t index = 0;
    if (token == "*") {
        if (node.is_structured()) {
            for (auto& element : node)
                visit(element);
        }
    } else if (node.is_object()) {
        if (const auto it = node.find(token); it != node.end())
            visit(*it);
    } else if (node.is_array() && isArrayIndex(token, index) && index < node.size()) {
        visit(node[index]);
    }
}

// Applies each "set" assignment of the variant to the document. Keys are applied in sorted order, which puts a
// parent's assignment before its children's.
void applyVariant(Json& root, size_t variantIndex, const std::string& file, const ScenarioLimits& limits)
{
    const std::string path = "/variants/" + std::to_string(variantIndex);
    const Json& variant = root["variants"][variantIndex];
    const auto setIt = variant.find("set");
    if (setIt == variant.end())
        return;
    // A copy: `variant` points into the document that the assignments change.
    const Json set = *setIt;
    applySet(root, set, path + "/set", file, limits);
}

void applySet(Json& root, const Json& set, const std::string& setPath, const std::string& file,
              const ScenarioLimits& limits)
{
    auto fail = [&file](std::string p, std::string message) {
        throw ReadFailure{Error{file, std::move(p), std::move(message)}};
    };
    if (!set.is_object())
        fail(setPath, "expected an object, got " + typeName(set));
    for (const auto& item : set.items()) {
        const std::string& pointer = item.key();
        const std::string p = child(setPath, pointer);
        if (pointer.empty())
            fail(p, "a variant cannot replace the whole scenario; set its parts (\"/threads/0/repeat\")");
        if (pointer == "/variants" || pointer.starts_with("/variants/"))
            fail(p, "a variant cannot change the variants");
        try {
            const Json::json_pointer ptr(pointer);
            std::vector<std::string> tokens;
            for (Json::json_pointer rest = ptr; !rest.empty(); rest.pop_back())
                tokens.push_back(rest.back());
            std::reverse(tokens.begin(), tokens.end());
            if (tokens.front() == "*")
                fail(p, "\"*\" cannot stand for a top-level field (it would reach the variants)");
            if (std::find(tokens.begin(), tokens.end(), "*") != tokens.end()) {
                // "*" stands for every element (or member): one assignment for a whole list of ops or streams.
                size_t count = 0;
                assignWhereExists(root, tokens, 0, nullptr, count);
                if (count == 0)
                    fail(p,
                         "cannot set " + jsonQuoted(pointer)
                             + ": it matches nothing (a \"*\" assignment replaces only values that exist)");
                // Each match gets a copy: a large value times many matches must not grow the scenario unbounded.
                const size_t valueBytes = dumpJson(item.value()).size();
                if (valueBytes > limits.maxBytes / count)
                    fail(p,
                         "cannot set " + jsonQuoted(pointer) + ": " + std::to_string(count) + " copies of "
                             + std::to_string(valueBytes) + " bytes exceed the limit of "
                             + std::to_string(limits.maxBytes) + " bytes");
                count = 0;
                assignWhereExists(root, tokens, 0, &item.value(), count);
                continue;
            }
            const Json::json_pointer parentPtr = ptr.parent_pointer();
            const std::string last = ptr.back();
            if (!root.contains(parentPtr))
                fail(p,
                     "cannot set " + jsonQuoted(pointer) + ": " + jsonQuoted(parentPtr.to_string())
                         + " does not exist");
            Json& parent = root.at(parentPtr);
            if (parent.is_object()) {
                parent[last] = item.value();
            } else if (parent.is_array()) {
                size_t index = 0;
                if (last == "-") {
                    parent.push_back(item.value());
                } else if (!isArrayIndex(last, index)) {
                    fail(p,
                         "cannot set " + jsonQuoted(pointer) + ": " + jsonQuoted(last)
                             + " is not an index of the array " + jsonQuoted(parentPtr.to_string()));
                } else if (index < parent.size()) {
                    parent[index] = item.value();
                } else if (index == parent.size()) {
                    parent.push_back(item.value());
                } else {
                    fail(p,
                         "cannot set " + jsonQuoted(pointer) + ": the array " + jsonQuoted(parentPtr.to_string())
                             + " has " + std::to_string(parent.size()) + " elements");
                }
            } else {
                fail(p,
                     "cannot set " + jsonQuoted(pointer) + ": " + jsonQuoted(parentPtr.to_string()) + " is "
                         + typeName(parent) + ", not an object or array");
            }
        } catch (const Json::exception& e) {
            fail(p, "not a usable JSON pointer: " + jsonQuoted(pointer) + " (" + plainMessage(e.what()) + ")");
        }
    }
}

} // namespace streamscope::scenario_json
