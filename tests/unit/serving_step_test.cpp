#include "src/serving_step.h"

#include <doctest/doctest.h>

using namespace tlsql;

TEST_CASE("serving steps: vLLM's step annotation, or a worker's per-step frame") {
  using tlsql::Kind;
  using tlsql::serving_step;
  auto d = serving_step(Kind::annotation,
                        "execute_32_context_0(sq0sk0sqsq0sqsk0)_generation_32(sq32sk55086sqsq32sqsk55086)");
  REQUIRE(d);
  CHECK(d->annotation);
  CHECK(d->tokens == 32);
  CHECK(d->prefill == 0);
  CHECK(d->decode == 32);
  CHECK(std::string(d->phase()) == "decode");
  auto p = serving_step(Kind::annotation, "execute_2048_context_4(sq512sk512)_generation_0()");
  REQUIRE(p);
  CHECK(std::string(p->phase()) == "prefill");
  auto m = serving_step(Kind::annotation, "execute_300_context_1(sq260sk260)_generation_40(sq40sk900)");
  REQUIRE(m);
  CHECK(std::string(m->phase()) == "mixed");
  auto bare = serving_step(Kind::annotation, "execute_8");
  REQUIRE(bare);
  CHECK(bare->tokens == 8);
  CHECK(bare->phase() == nullptr);  // the name says nothing about the requests
  for (const char* n : {"execute_x", "execute_12abc", "ProfilerStep#3", "execute_model"})
    CHECK_MESSAGE(!serving_step(Kind::annotation, n), n);
  // Frames: a step but no batch.
  auto f = serving_step(Kind::python, "vllm/v1/worker/gpu_worker.py(263): execute_model");
  REQUIRE(f);
  CHECK_FALSE(f->annotation);
  CHECK_FALSE(f->tokens.has_value());
  CHECK(serving_step(Kind::python, "sglang/srt/managers/tp_worker.py(190): forward_batch_generation"));
  CHECK(serving_step(Kind::python, "vllm/worker/worker_base.py(393): execute_model"));  // V0
  CHECK(serving_step(Kind::python, "vllm/spec_decode/spec_decode_worker.py(418): execute_model"));
  for (const char* n : {"vllm/v1/worker/gpu_model_runner.py(1002): execute_model", "model.py(3): forward",
                        "vllm/worker/model_runner.py(1620): execute_model", "my_worker_base_x.py(1): execute_model",
                        "vllm/v1/worker/gpu_worker.py(263): execute_model_x", "no frame"})
    CHECK_MESSAGE(!serving_step(Kind::python, n), n);
  CHECK_FALSE(serving_step(Kind::cpu_op, "vllm/v1/worker/gpu_worker.py(263): execute_model"));
}

TEST_CASE("serving steps: the detailed annotations' sq/sk aggregates, vLLM / SGLang / ATOM formats") {
  using tlsql::Kind;
  using tlsql::serving_step;
  using tlsql::StepLengths;
  // vLLM detailed: each group's (sq, sk, sqsq, sqsk) in order, context then generation.
  auto v =
      serving_step(Kind::annotation,
                   "execute_6147_context_2(sq6144sk7144sqsq20971520sqsk23019520)_generation_3(sq3sk6144sqsq3sqsk6144)");
  REQUIRE(v);
  CHECK(v->tokens == 6147);
  CHECK(v->prefill == 2);
  CHECK(v->decode == 3);
  CHECK(std::string(v->phase()) == "mixed");
  REQUIRE(v->lengths);
  CHECK(*v->lengths == StepLengths{6144, 7144, 20971520, 23019520, 3, 6144, 3, 6144});
  // Without aggregates, or with other text in the parentheses: counts, no lengths.
  auto p = serving_step(Kind::annotation, "execute_2048_context_4(sq512sk512)_generation_0()");
  REQUIRE(p);
  CHECK_FALSE(p->lengths);
  // vLLM native: requests, and each group's tokens in the parentheses.
  auto n = serving_step(Kind::annotation, "execute_context_2(14721)_generation_3(3)");
  REQUIRE(n);
  CHECK(n->annotation);
  CHECK(n->tokens == 14724);  // 14721 + 3
  CHECK(n->prefill == 2);
  CHECK(n->decode == 3);
  CHECK_FALSE(n->lengths);
  // More numbers after the tokens (a B200 vLLM trace: 888 and 888²): the tokens are the first.
  auto n2 = serving_step(Kind::annotation, "execute_context_1(888_788544)_generation_0(0)");
  REQUIRE(n2);
  CHECK(n2->tokens == 888);
  CHECK(std::string(n2->phase()) == "prefill");
  // SGLang: the mode word, bs requests; the detailed form's c_* / g_* aggregates.
  auto e = serving_step(Kind::annotation,
                        "step[EXTEND bs=2 toks=14721 c_sq=14721 c_sqsq=108745533 c_sqsk=108745533 c_sk=14721]");
  REQUIRE(e);
  CHECK(e->tokens == 14721);
  CHECK(e->prefill == 2);
  CHECK(e->decode == 0);
  CHECK(std::string(e->phase()) == "prefill");
  REQUIRE(e->lengths);
  CHECK(*e->lengths == StepLengths{14721, 14721, 108745533, 108745533, 0, 0, 0, 0});
  auto d = serving_step(Kind::annotation, "step[DECODE bs=64 g_sq=128 g_sqsq=256 g_sqsk=262144 g_sk=131072]");
  REQUIRE(d);
  CHECK(d->decode == 64);
  CHECK(d->tokens == 128);  // MTP: two tokens per request, from g_sq
  CHECK(*d->lengths == StepLengths{0, 0, 0, 0, 128, 131072, 256, 262144});
  auto m = serving_step(Kind::annotation, "step[MIXED bs=2]");
  REQUIRE(m);
  CHECK_FALSE(m->prefill);  // the label says mixed, not how many of each
  CHECK(std::string(m->phase()) == "mixed");
  CHECK_FALSE(m->tokens);
  auto mc = serving_step(
      Kind::annotation, "step[MIXED bs=2 c=1 g=1 c_sq=5 c_sk=8 c_sqsq=25 c_sqsk=40 g_sq=1 g_sk=12 g_sqsq=1 g_sqsk=12]");
  REQUIRE(mc);
  CHECK(mc->prefill == 1);
  CHECK(mc->decode == 1);
  CHECK(mc->tokens == 6);
  CHECK(*mc->lengths == StepLengths{5, 8, 25, 40, 1, 12, 1, 12});
  // ATOM: one group, the phase's; bs=117/128 is 117 requests (the graph's padding after the slash).
  auto ap =
      serving_step(Kind::annotation, "prefill[bs=2 tok=14721 ctx=[7803, 6918] sqsq=108745533 sqsk=108745533 sk=14721]");
  REQUIRE(ap);
  CHECK(ap->prefill == 2);
  CHECK(ap->tokens == 14721);
  CHECK(*ap->lengths == StepLengths{14721, 14721, 108745533, 108745533, 0, 0, 0, 0});
  auto ad = serving_step(Kind::annotation, "decode[bs=117/128 tok=117 d=117]");
  REQUIRE(ad);
  CHECK(ad->decode == 117);
  CHECK(ad->prefill == 0);
  CHECK(std::string(ad->phase()) == "decode");
  CHECK_FALSE(ad->lengths);
  auto amix =
      serving_step(Kind::annotation, "decode[bs=128 tok=384 p=2 d=126 sqsq=132612 sqsk=1114112 sk=258048 tbo=1]");
  REQUIRE(amix);
  CHECK(std::string(amix->phase()) == "mixed");
  CHECK(*amix->lengths == StepLengths{0, 0, 0, 0, 384, 258048, 132612, 1114112});
  // Not steps: other words, no bs=, a sign, numbers past int64, text after the last group.
  for (const char* no : {"step[IDLE bs=1]", "step[DECODE]", "step[DECODE bs=x]", "decode[tok=3]", "prefill[bs=2",
                         "execute_-5", "execute_context_2(x)_generation_0(0)", "execute_context_2(1_)_generation_0(0)",
                         "execute_context_2(1)_generation_0(0)x", "execute_99999999999999999999", "step[DECODE abs=3]"})
    CHECK_MESSAGE(!serving_step(Kind::annotation, no), std::string(no));
  // Token sums that overflow: the step, without a token count.
  auto big = serving_step(Kind::annotation, "execute_context_1(9223372036854775807)_generation_1(1)");
  REQUIRE(big);
  CHECK_FALSE(big->tokens);
}
