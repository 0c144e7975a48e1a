-- tests/data/serving_sglang_decode.json: one decode layer of SGLang on ROCm (AITER kernels and
-- sgl_kernel ops), made by hand: step[DECODE bs=3 g_sq=3 g_sk=50 g_sqsq=3 g_sqsk=50] around eight
-- ops, each launching one kernel (4, 3, 10, 5, 8, 2, 2, 6 µs: 40 µs). Hidden 64 in rows of 3 tokens
-- (N = 192), 4 query heads and 2 KV heads of 8, 50 keys over the 3 requests. By hand:
-- aiter::rmsnorm(out, input [3, 64] bf16, weight [64], eps, gemma): 4·192 + 2·3 = 774 FLOPs;
--   input, output 192·2 each + weight 64·2 = 896 bytes
-- sgl_kernel::rotary_embedding(positions [3], query [3, 32], key [3, 16], head_size 8, cache [4096, 8]
--   bf16, is_neox): 48·3 rotated elements (all 8 of each head) · 3 = 432; 144·2·2 read and written
--   + 3 cache rows of 8·2 + 3 positions · 8 = 576 + 48 + 24 = 648
-- aiter::paged_attention_ragged(out, workspace, query [3, 4, 8], key_cache [100, 16, 2, 8] (NHD),
--   value_cache, ...): a decode kernel: Hq 4 · 2 · (8 + 8) · g_sqsk 50 = 6400; Q, O, the new K, V
--   3 · (4·16 + 2·16) · 2 = 576 + the 47 cached keys' K, V 47 · 2·16 · 2 = 3008: 3584
-- aiter::add_rmsnorm(out, input, residual_in, residual_out, weight, ...): 774 + 192 adds = 966;
--   input, residual read, output, residual written 4·192·2 + weight 128 = 1664
-- aiter::gemm_a8w8_bpreshuffle_ck(XQ fp8 [3, 64], WQ fp8 [256, 64], x_scale, w_scale, Out bf16
--   [3, 256]): 2·3·256·64 = 98304; 192 + 16384 + 3·256·2 = 18112
-- sgl_kernel::silu_and_mul(out [3, 128], input [3, 256]): 384 outputs · 5 = 1920; 768·2 + 384·2 = 2304
-- aiter::dynamic_per_token_scaled_quant(out fp8 [3, 128], input bf16, scales float [3, 1]): max-abs
--   and scale 2·384 = 768; 384·2 + 384 + 3·4 = 1164
-- sgl_kernel::moe_fused_gate: no model (category other); its 6 µs stay unmodeled.
-- Share of the counted GPU time with a model: 34 of 40 µs = 85% (no op here had one before).
SELECT name, flops(uid) AS flops, bytes(uid) AS bytes, op_category(name) AS category FROM op ORDER BY uid;
SELECT round(100.0 * sum(gpu_ns) FILTER (WHERE flops(uid) IS NOT NULL) / sum(gpu_ns), 2) AS modeled_pct,
       sum(gpu_ns) / 1000 AS gpu_us
FROM counted_op;
