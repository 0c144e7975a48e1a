#!/bin/sh
# Perf models of the user's own (temp.perf_model_user, udf/perf/user_models.h), on the bert trace:
# - a model for an op tlsql has none for: aten::_flash_attention_forward(q, k, v [B, N, H, D], ...)
#   with 4·B·N_q·N_kv·H·D FLOPs = 4·1·141·141·8·64 = 40,716,288 (TraceLens's SDPA figure for this
#   op) and bytes 4 tensors of 141·8·64 bf16 = 577,536; the op now carries the numbers and the
#   SDPA op above it reports them (beneath); counted_op still counts the same GPU time;
# - an override of a built-in: gelu at 8 FLOPs per element, [1, 141, 2048] -> 2,310,144;
# - DELETE gives the built-in back (1 per element: 288,768); a formula SQLite cannot compile fails
#   the INSERT (exit 1, naming the op); --models FILE runs first; a saved database gives the same.
set -eu
tlsql=$1 trace=$2 work=$3
models="$work/user_models.sql"
cat > "$models" <<'SQL'
INSERT INTO perf_model_user(name, category, flops, bytes, matrix) VALUES
  ('aten::_flash_attention_forward', 'SDPA_fwd',
   '4 * (input_dims ->> ''$[0][0]'') * (input_dims ->> ''$[0][1]'') * (input_dims ->> ''$[1][1]'')
      * (input_dims ->> ''$[0][2]'') * (input_dims ->> ''$[0][3]'')',
   '4 * numel(input_dims ->> ''$[0]'') * dtype_bytes(input_types ->> ''$[0]'')', 1),
  ('aten::gelu', 'elementwise', '8 * numel(input_dims ->> ''$[0]'')', NULL, 0);
SQL
q="SELECT flops(uid), bytes(uid), perf_source(uid), op_category(name), peak_units(uid) FROM op
     WHERE name = 'aten::_flash_attention_forward' ORDER BY uid LIMIT 1;
   SELECT flops(uid), perf_source(uid) FROM op WHERE name = 'aten::_scaled_dot_product_flash_attention' ORDER BY uid LIMIT 1;
   SELECT flops(uid) FROM op WHERE name = 'aten::gelu' AND input_dims = '[[1,141,2048],[]]' LIMIT 1;
   SELECT sum(gpu_ns) FROM counted_op;"
want=$(printf '%s\n' 'flops(uid),bytes(uid),perf_source(uid),op_category(name),peak_units(uid)' \
  '40716288.0,577536.0,model,SDPA_fwd,matrix' 'flops(uid),perf_source(uid)' '40716288.0,beneath' 'flops(uid)' \
  '2310144.0' 'sum(gpu_ns)')
total=$("$tlsql" -q "$trace" --csv -c "SELECT sum(gpu_ns) FROM counted_op" | tail -1)
got=$("$tlsql" -q "$trace" --csv --models "$models" -c "$q")
[ "$got" = "$(printf '%s\n%s' "$want" "$total")" ] || { printf 'with --models:\n%s\n' "$got"; exit 1; }
db="$work/user_models.db"
rm -f "$db"
"$tlsql" -q "$trace" -o "$db" -c "SELECT 1" >/dev/null
got=$("$tlsql" -q "$db" --csv --models "$models" -c "$q")
[ "$got" = "$(printf '%s\n%s' "$want" "$total")" ] || { printf 'saved database:\n%s\n' "$got"; exit 1; }
got=$("$tlsql" -q "$trace" --csv --models "$models" \
  -c "DELETE FROM perf_model_user WHERE name = 'aten::gelu'" \
  -c "SELECT flops(uid) FROM op WHERE name = 'aten::gelu' AND input_dims = '[[1,141,2048],[]]' LIMIT 1" | tail -1)
[ "$got" = "288768.0" ] || { echo "after DELETE: $got"; exit 1; }
if err=$("$tlsql" -q "$trace" -c "INSERT INTO perf_model_user(name, flops) VALUES ('my::op', '2 *')" 2>&1); then
  echo "a bad formula was accepted"; exit 1
fi
case "$err" in *"perf_model_user 'my::op'"*) ;; *) echo "bad formula: $err"; exit 1 ;; esac
echo "user models ok"
