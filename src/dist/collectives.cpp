#include "dpgnn/dist/collectives.h"

namespace dpgnn::dist {

Collectives Collectives::open(bool on_gpu, int cuda_device) {
  auto host = make_communicator(BufferLocation::host);
  std::unique_ptr<Communicator> device;
  if (on_gpu) device = make_communicator(BufferLocation::cuda, cuda_device);
  return Collectives(std::move(host), std::move(device));
}

}  // namespace dpgnn::dist
