// Perf models users add or override without recompiling (TraceLens's --extension_file): rows of
// temp.perf_model_user, one per op name, whose FLOPs, bytes and dtype are SQL expressions over
// the op's columns (name, input_dims, input_types, input_strides, concrete_inputs, args).
//
//   INSERT INTO perf_model_user(name, category, flops, bytes, matrix) VALUES
//     ('mylib::fused_mlp', 'GEMM', '2 * (input_dims ->> ''$[0][0]'') * ...', '...', 1);
//
// A formula that SQLite cannot compile fails the INSERT / UPDATE, naming the op. Every change
// takes effect at the next query (the perf tables are recomputed): a user row overrides the
// built-in model of the same name (perf_model.h), and op_category / has_perf_model follow it.
#pragma once

#include <sqlite3.h>

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <string>

#include "udf/perf/perf_model.h"

namespace tlsql {

struct UserModel {
  std::string category, flops, bytes, dtype;  // SQL expressions (dtype: default the first input's type)
  bool matrix = false;                        // read against the matrix peak
};
struct UserModels {
  uint64_t generation = 0;  // changes with every change of the table
  std::map<std::string, UserModel, std::less<>> by_name;
  const UserModel* find(std::string_view name) const {
    auto it = by_name.find(name);
    return it == by_name.end() ? nullptr : &it->second;
  }
};

// has_perf_model / op_category (perf_model.h) with the user's row of that name, if any, first.
bool has_perf_model(const UserModels* user, std::string_view name);
std::string op_category(const UserModels* user, std::string_view name);

// Creates temp.perf_model_user and the triggers that keep the connection's models current (they
// call tlsql_perf_models_changed(), registered with the other SQL functions).
void install_user_models(sqlite3* db);
void perf_models_changed_fn(sqlite3_context* ctx, int argc, sqlite3_value** argv);
// The connection's models; nullptr when it has none.
std::shared_ptr<const UserModels> user_models(sqlite3* db);

// Evaluates the user models on the ops of `schema`.event they name: `found(uid, model)` for each.
// False with `error` set when SQLite fails.
bool apply_user_models(sqlite3* db, const std::string& schema, const UserModels& models,
                       const std::function<void(int64_t, OpPerf)>& found, std::string& error);

}  // namespace tlsql
