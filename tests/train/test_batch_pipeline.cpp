// FeatureBuffers (train/batch_pipeline.h): a buffer is handed out again only once no tensor refers to it.
#include <gtest/gtest.h>

#include <ATen/ATen.h>

#include "batch_pipeline.h"

namespace dpgnn::train {
namespace {

TEST(FeatureBuffers, ReusesABufferOnlyOnceNoTensorRefersToIt) {
  FeatureBuffers pool(2);
  at::Tensor a = pool.take(10, 4);
  EXPECT_EQ(a.sizes(), (std::vector<std::int64_t>{10, 4}));
  EXPECT_TRUE(a.is_contiguous());
  const float* pa = a.data_ptr<float>();
  a.fill_(1.0f);
  at::Tensor b = pool.take(10, 4);  // a is alive: another buffer
  EXPECT_NE(b.data_ptr<float>(), pa);
  const at::Tensor view = a.narrow(0, 2, 3);  // a view keeps a's memory in use
  a = at::Tensor();
  at::Tensor c = pool.take(9, 4);
  EXPECT_NE(c.data_ptr<float>(), pa);
  EXPECT_TRUE(view.eq(1.0f).all().item<bool>());  // not overwritten
  c = at::Tensor();
  b = at::Tensor();
  // The pool holds two buffers (a's and b's); a's view is gone now too: a's memory comes back.
  const_cast<at::Tensor&>(view) = at::Tensor();
  at::Tensor d = pool.take(8, 4);
  at::Tensor e = pool.take(8, 4);
  EXPECT_TRUE(d.data_ptr<float>() == pa || e.data_ptr<float>() == pa);
  // Larger than every buffer: new memory.
  at::Tensor f = pool.take(1000, 4);
  EXPECT_EQ(f.numel(), 4000);
}

}  // namespace
}  // namespace dpgnn::train
