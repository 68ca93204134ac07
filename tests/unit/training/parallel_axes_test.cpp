// The parallel axes of a training job: rank order and the axes each communication group spans.
#include "training/parallel_axes.h"

#include <gtest/gtest.h>

#include "core/diagnostics.h"

namespace orrery {
namespace {

// Placement tp, ep, dp, pp / rank order tp, cp, ep, dp, pp with sizes 8, 2, 4, 16 / 4, 4, because
// Megatron-LM puts context parallelism right outside tensor parallelism and the dp axis counts the
// expert-data-parallel replicas (dp 16 over ep 4).
TEST(ParallelAxes, ContextSitsOutsideTensorAndDpCountsExpertReplicas) {
  Parallelism par;
  par.tp = 8;
  par.cp = 2;
  par.ep = 4;
  par.pp = 4;
  par.world_size = 8 * 2 * 16 * 4;
  const std::vector<TrainingAxis> order = rank_order({"tp", "ep", "dp", "pp"});
  ASSERT_EQ(order.size(), 5u);
  EXPECT_EQ(order[1], TrainingAxis::Cp);
  const std::vector<ParallelAxis> axes = parallel_axes(par, order);
  const std::vector<std::pair<std::string, int64_t>> expected = {
      {"tp", 8}, {"cp", 2}, {"ep", 4}, {"dp", 4}, {"pp", 4}};
  ASSERT_EQ(axes.size(), expected.size());
  for (size_t i = 0; i < axes.size(); ++i) {
    EXPECT_EQ(axes[i].name, expected[i].first);
    EXPECT_EQ(axes[i].size, expected[i].second);
  }
  // Data gradients reduce over cp, ep and dp; expert-data over cp and dp.
  EXPECT_EQ(group_axes(CommGroup::Data, order), (std::vector<size_t>{1, 2, 3}));
  EXPECT_EQ(group_axes(CommGroup::ExpertData, order), (std::vector<size_t>{1, 3}));
  EXPECT_EQ(group_axes(CommGroup::Pipeline, order), (std::vector<size_t>{4}));
}

// An axis name other than tp, ep, dp and pp / an error naming it, because treating it as data
// parallelism would place ranks where the user did not say.
TEST(ParallelAxes, UnknownNameIsAnErrorNotDataParallelism) {
  try {
    rank_order({"tp", "xp", "dp", "pp"});
    FAIL() << "expected an error";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("'xp'"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace orrery
