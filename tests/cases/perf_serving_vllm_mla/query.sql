-- tests/data/serving_vllm_mla_mixed.json, made by hand: vLLM's MLA layer (DeepSeek shapes, 16 heads:
-- qk_head_dim 192, kv_lora_rank 512, rope 64, v_head_dim 2048 / 16 = 128) in a mixed step
-- execute_13_context_1(sq10sk10sqsq100sqsk100)_generation_3(sq3sk50sqsq3sqsk50): a fresh prefill of
-- 10 tokens and 3 decode tokens over 50 keys. Layer 0 runs the prefill through FlashAttention
-- (_vllm_fa3_C::fwd, q [10, 16, 192], k [10, 16, 192], v [10, 16, 128]) and the decode through FlashMLA
-- (q [3, 1, 16, 576] on the latent cache [100, 64, 1, 576], head_size_v 512); layer 1 launches its
-- kernel itself (a Triton MLA kernel from Python). By hand:
-- FlashAttention, given the 10 context rows over 10 keys: 16·2·(192 + 128)·100 - 16·320·100 =
--   512000 FLOPs; Q, O and K, V of the 10 tokens 10·(16·320 + 16·320)·2 = 204800 bytes
-- FlashMLA, a decode kernel: 16·2·(576 + 512)·50 = 1740800 FLOPs; Q, O 3·16·1088 + the 3 new latent
--   rows 3·576 = 53952 elements ·2 = 107904, the 47 cached rows 47·576·2 = 54144: 162048 bytes
-- vllm::unified_mla_attention_with_output: both groups, 512000 + 1740800 = 2252800 FLOPs and
--   204800 + 162048 = 366848 bytes: layer 0 reports its children's (beneath: each request counted
--   once, not the whole step in each child), layer 1 its own model, the same numbers.
SELECT name, flops(uid) AS flops, bytes(uid) AS bytes, perf_source(uid) AS source FROM op ORDER BY uid;
-- the counted ops' FLOPs: two layers, 2 · 2252800
SELECT sum(flops(uid)) AS counted_flops FROM counted_op;
