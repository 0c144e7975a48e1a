#!/bin/sh
# Every trace in ../shared/traces loads, and:
# - health accounts for every GPU event that is not linked to a launch (gpu_without_launch = the
#   GPU events missing from launch_link);
# - every GPU event with a launch is under exactly one counted row (counted_op: an op, or the launch
#   call itself when no op is above it), so the ops report counts its time once;
# - no event is printed above 100% of its GPU's peak: achieved_pct never exceeds 100, and the
#   events bound(uid) calls 'above_peak' are memory-bound ones within 2.5x the HBM bandwidth (data
#   the previous op left in L2, 1 µs timer resolution), never a compute-bound one (that would be a
#   model or peak bug: an fp32 GEMM on TF32 tensor cores read against the CUDA-core peak, a conv
#   whose stride was guessed);
# - no op of a modeled family with recorded shapes (some dimension in Input Dims) has NULL FLOPs, except an op whose GPU work
#   copies over a link (not HBM traffic), a convolution whose stride / padding / dilation the
#   trace does not record, and a serving step's attention op (vllm::unified_attention*, vLLM's FlashAttention
#   ops) with no step annotation giving the sq/sk aggregates above it (docs/perf_models.md).
tlsql=$1 shared=$2
[ -d "$shared/traces" ] || { echo "SKIP: $shared/traces not present"; exit 0; }
n=0
for f in $(find "$shared/traces" -name '*.json*' | sort); do
  got=$("$tlsql" "$f" --csv -c "SELECT (SELECT count(*) FROM gpu g WHERE NOT EXISTS (SELECT 1 FROM launch_link l WHERE l.gpu = g.uid))
      = coalesce((SELECT sum(count) FROM health WHERE \"check\" = 'gpu_without_launch'), 0) AS linked,
    (SELECT count(*) FROM event WHERE achieved_pct(uid) > 100
       OR (bound(uid) = 'above_peak' AND (coalesce(intensity(uid) >= peak_tflops(uid) / peak_tbps(uid), bytes(uid) IS NULL)
                                          OR tbps(uid) > 2.5 * peak_tbps(uid)))) AS over_peak,
    (SELECT count(*) FROM op o WHERE has_perf_model(name) AND input_dims GLOB '*[0-9]*' AND flops(uid) IS NULL
       AND NOT (op_category(name) LIKE 'CONV%' AND coalesce(concrete_inputs, '') IN ('', '[]'))
       AND NOT ((name GLOB 'vllm::unified_attention*' OR name GLOB '_vllm_fa[23]_C::*') AND NOT EXISTS (SELECT 1 FROM ancestors(o.uid) a
                  WHERE a.kind = 'annotation' AND serving_step(a.kind, a.name) ->> '\$.g_sq' IS NOT NULL))
       AND NOT EXISTS (SELECT 1 FROM descendants(o.uid) d WHERE d.kind = 'memcpy'
                         AND (d.name GLOB '*[HDP]to[HDAP]*'))) AS unmodeled,
    (SELECT count(*) FROM gpu g WHERE EXISTS (SELECT 1 FROM launch_link l WHERE l.gpu = g.uid)
       AND (SELECT count(*) FROM ancestors(g.uid) a WHERE counted(a.uid)) <> 1) AS not_counted_once") ||
    { echo "$f: load failed"; exit 1; }
  [ "$got" = "$(printf 'linked,over_peak,unmodeled,not_counted_once\n1,0,0,0')" ] || { echo "$f: $got"; exit 1; }
  n=$((n + 1))
done
echo "$n traces ok"
