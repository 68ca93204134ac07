// Layer-to-stage assignment as Megatron-LM makes it (models/stage_layout.h).
#include "models/stage_layout.h"

#include <gtest/gtest.h>

#include <stdexcept>

namespace orrery {
namespace {

using Counts = std::vector<int64_t>;

// Llama-3.1-405B's 126 layers on PP 16 / the first and last stage hold 7, the 14 middle ones 8,
// because the remainder goes to the middle (the ends carry the embedding and the LM head).
TEST(StageLayout, RemainderGoesToTheMiddleStages) {
  const StageLayout l = stage_layout(126, 16, 1, std::nullopt, std::nullopt);
  Counts expected(16, 8);
  expected.front() = expected.back() = 7;
  EXPECT_EQ(l.layers, expected);
  EXPECT_EQ(l.first[1], 7);
  EXPECT_EQ(l.first[15], 119);
}

// GPT-3 175B on PP 8 x VPP 3 / 24 chunks of 4 layers; stage 1 holds chunks 1, 9, 17, because
// virtual stage v = chunk x pp + stage (Megatron's numbering).
TEST(StageLayout, InterleavedChunksFollowMegatronsNumbering) {
  const StageLayout l = stage_layout(96, 8, 3, std::nullopt, std::nullopt);
  EXPECT_EQ(l.layers, Counts(24, 4));
  EXPECT_EQ(l.stage_layer_indices(1), (Counts{4, 5, 6, 7, 36, 37, 38, 39, 68, 69, 70, 71}));
}

// 32 layers on PP 4 with --first-stage-layers 5 --last-stage-layers 9 / the middle stages share
// the other 18, 9 each.
TEST(StageLayout, FirstAndLastStageCountsAreHonoured) {
  const StageLayout l = stage_layout(32, 4, 1, 5, 9);
  EXPECT_EQ(l.layers, (Counts{5, 9, 9, 9}));
}

// Plans that leave a chunk without a layer are refused, naming the flags.
TEST(StageLayout, EmptyChunksAreRefused) {
  EXPECT_THROW(stage_layout(8, 4, 3, std::nullopt, std::nullopt), std::invalid_argument);
  EXPECT_THROW(stage_layout(10, 4, 1, 5, 5), std::invalid_argument);
  EXPECT_THROW(stage_layout(10, 1, 1, 5, std::nullopt), std::invalid_argument);
}

}  // namespace
}  // namespace orrery
