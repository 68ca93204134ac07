// GEMMs through cuBLASLt as Transformer Engine runs them. Reads "name m n k" lines on stdin and
// prints "name,m,n,k,type,variant,us" lines. Times: median of 7 groups of back-to-back calls
// between CUDA events, after 10 s of load.
// - no argument (scripts/device/measure-wgrad-accumulate.sh; m = out, n = in, k = tokens): FP8
//   (e4m3, split accumulator) or BF16 operands, the output written as BF16 or as fp32, or
//   accumulated into an fp32 buffer (beta 1, TE's wgrad accumulation into Megatron's main_grad);
// - `operands` (scripts/device/measure-fp8-operands.sh): BF16 output, e4m3 x e4m3 with the split
//   accumulator and with fast accumulation (TE's forward GEMMs), e4m3 x e5m2 (TE's input
//   gradient: the output gradient in e5m2), and BF16.
#include <cublasLt.h>
#include <cuda_bf16.h>
#include <cuda_fp8.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <array>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <iostream>
#include <string>
#include <vector>

#define CHECK_CUDA(x)                                                             \
  do {                                                                            \
    cudaError_t e = (x);                                                          \
    if (e != cudaSuccess) {                                                       \
      std::fprintf(stderr, "%s: %s\n", #x, cudaGetErrorString(e));                \
      std::exit(1);                                                               \
    }                                                                             \
  } while (0)
#define CHECK_LT(x)                                                               \
  do {                                                                            \
    cublasStatus_t s = (x);                                                       \
    if (s != CUBLAS_STATUS_SUCCESS) {                                             \
      std::fprintf(stderr, "%s: status %d\n", #x, static_cast<int>(s));           \
      return -1.0;                                                                \
    }                                                                             \
  } while (0)

namespace {

constexpr size_t kWorkspace = 32u << 20;

struct Buffers {
  void* a = nullptr;  // k x m, column-major (used transposed: TN, as FP8 requires)
  void* b = nullptr;  // k x n, column-major
  void* c = nullptr;  // m x n, column-major, fp32 (big enough for bf16 too)
  void* workspace = nullptr;
  float* one = nullptr;  // device scale 1.0 for the FP8 operands
};

// Microseconds per call of D = A^T B (+ beta C) on the given types; -1 where cuBLASLt has no
// kernel for it.
double time_gemm(cublasLtHandle_t lt, const Buffers& buf, int64_t m, int64_t n, int64_t k,
                 cudaDataType_t a_type, cudaDataType_t b_type, cudaDataType_t cd_type, float beta,
                 bool fast_accumulation = false) {
  cublasLtMatmulDesc_t desc;
  CHECK_LT(cublasLtMatmulDescCreate(&desc, CUBLAS_COMPUTE_32F, CUDA_R_32F));
  const cublasOperation_t ta = CUBLAS_OP_T, tb = CUBLAS_OP_N;
  CHECK_LT(cublasLtMatmulDescSetAttribute(desc, CUBLASLT_MATMUL_DESC_TRANSA, &ta, sizeof(ta)));
  CHECK_LT(cublasLtMatmulDescSetAttribute(desc, CUBLASLT_MATMUL_DESC_TRANSB, &tb, sizeof(tb)));
  if (a_type != CUDA_R_16BF) {
    const int8_t fast = fast_accumulation ? 1 : 0;
    CHECK_LT(cublasLtMatmulDescSetAttribute(desc, CUBLASLT_MATMUL_DESC_FAST_ACCUM, &fast,
                                            sizeof(fast)));
    CHECK_LT(cublasLtMatmulDescSetAttribute(desc, CUBLASLT_MATMUL_DESC_A_SCALE_POINTER, &buf.one,
                                            sizeof(buf.one)));
    CHECK_LT(cublasLtMatmulDescSetAttribute(desc, CUBLASLT_MATMUL_DESC_B_SCALE_POINTER, &buf.one,
                                            sizeof(buf.one)));
  }
  cublasLtMatrixLayout_t la, lb, lc;
  CHECK_LT(cublasLtMatrixLayoutCreate(&la, a_type, k, m, k));
  CHECK_LT(cublasLtMatrixLayoutCreate(&lb, b_type, k, n, k));
  CHECK_LT(cublasLtMatrixLayoutCreate(&lc, cd_type, m, n, m));
  cublasLtMatmulPreference_t pref;
  CHECK_LT(cublasLtMatmulPreferenceCreate(&pref));
  CHECK_LT(cublasLtMatmulPreferenceSetAttribute(pref, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES,
                                                &kWorkspace, sizeof(kWorkspace)));
  cublasLtMatmulHeuristicResult_t result;
  int found = 0;
  CHECK_LT(cublasLtMatmulAlgoGetHeuristic(lt, desc, la, lb, lc, lc, pref, 1, &result, &found));
  if (found == 0) return -1.0;
  const float alpha = 1.0f;
  const auto call = [&] {
    return cublasLtMatmul(lt, desc, &alpha, buf.a, la, buf.b, lb, &beta, buf.c, lc, buf.c, lc,
                          &result.algo, buf.workspace, kWorkspace, nullptr);
  };
  for (int i = 0; i < 3; ++i) CHECK_LT(call());
  CHECK_CUDA(cudaDeviceSynchronize());
  cudaEvent_t start, stop;
  CHECK_CUDA(cudaEventCreate(&start));
  CHECK_CUDA(cudaEventCreate(&stop));
  CHECK_CUDA(cudaEventRecord(start));
  CHECK_LT(call());
  CHECK_CUDA(cudaEventRecord(stop));
  CHECK_CUDA(cudaEventSynchronize(stop));
  float one_ms = 0;
  CHECK_CUDA(cudaEventElapsedTime(&one_ms, start, stop));
  const int calls = std::clamp(static_cast<int>(4.0f / std::max(one_ms, 1e-3f)), 1, 200);
  std::vector<double> samples;
  for (int g = 0; g < 7; ++g) {
    CHECK_CUDA(cudaEventRecord(start));
    for (int i = 0; i < calls; ++i) CHECK_LT(call());
    CHECK_CUDA(cudaEventRecord(stop));
    CHECK_CUDA(cudaEventSynchronize(stop));
    float ms = 0;
    CHECK_CUDA(cudaEventElapsedTime(&ms, start, stop));
    samples.push_back(1000.0 * ms / calls);
  }
  std::sort(samples.begin(), samples.end());
  cublasLtMatmulPreferenceDestroy(pref);
  cublasLtMatrixLayoutDestroy(la);
  cublasLtMatrixLayoutDestroy(lb);
  cublasLtMatrixLayoutDestroy(lc);
  cublasLtMatmulDescDestroy(desc);
  cudaEventDestroy(start);
  cudaEventDestroy(stop);
  return samples[samples.size() / 2];
}

}  // namespace

int main(int argc, char** argv) {
  cublasLtHandle_t lt;
  if (cublasLtCreate(&lt) != CUBLAS_STATUS_SUCCESS) return 1;
  std::vector<std::string> names;
  std::vector<std::array<int64_t, 3>> shapes;
  std::string name;
  int64_t m, n, k, largest = 0;
  while (std::cin >> name >> m >> n >> k) {
    names.push_back(name);
    shapes.push_back({m, n, k});
    largest = std::max({largest, m * k, n * k, m * n});
  }
  largest = std::max<int64_t>(largest, 8192 * 8192);
  Buffers buf;
  CHECK_CUDA(cudaMalloc(&buf.a, largest * 2));
  CHECK_CUDA(cudaMalloc(&buf.b, largest * 2));
  CHECK_CUDA(cudaMalloc(&buf.c, largest * 4));
  CHECK_CUDA(cudaMalloc(&buf.workspace, kWorkspace));
  CHECK_CUDA(cudaMalloc(&buf.one, sizeof(float)));
  const float one = 1.0f;
  CHECK_CUDA(cudaMemcpy(buf.one, &one, sizeof(one), cudaMemcpyHostToDevice));
  // Random operands (constant ones draw less power and clock higher): random bytes with bit 6
  // cleared, so that every e4m3 byte and every bf16 half is finite and below 2 in magnitude.
  {
    std::vector<uint64_t> host(static_cast<size_t>(largest * 2 / 8 + 1));
    uint64_t x = 0x9e3779b97f4a7c15ull;
    for (uint64_t& word : host) {
      x ^= x << 13, x ^= x >> 7, x ^= x << 17;
      word = x & 0xbfbfbfbfbfbfbfbfull;
    }
    CHECK_CUDA(cudaMemcpy(buf.a, host.data(), largest * 2, cudaMemcpyHostToDevice));
    CHECK_CUDA(cudaMemcpy(buf.b, host.data(), largest * 2, cudaMemcpyHostToDevice));
    CHECK_CUDA(cudaMemset(buf.c, 0, largest * 4));
  }
  struct Variant {
    const char* type;
    const char* name;
    cudaDataType_t a, b, cd;
    float beta;
    bool fast;
  };
  constexpr cudaDataType_t E4M3 = CUDA_R_8F_E4M3, E5M2 = CUDA_R_8F_E5M2, BF16 = CUDA_R_16BF,
                           F32 = CUDA_R_32F;
  const std::vector<Variant> wgrad = {
      {"fp8", "bf16_out", E4M3, E4M3, BF16, 0.0f, false},
      {"fp8", "fp32_out", E4M3, E4M3, F32, 0.0f, false},
      {"fp8", "fp32_accumulate", E4M3, E4M3, F32, 1.0f, false},
      {"bf16", "bf16_out", BF16, BF16, BF16, 0.0f, false},
      {"bf16", "fp32_out", BF16, BF16, F32, 0.0f, false},
      {"bf16", "fp32_accumulate", BF16, BF16, F32, 1.0f, false},
  };
  const std::vector<Variant> operands = {
      {"fp8", "e4m3_split", E4M3, E4M3, BF16, 0.0f, false},
      {"fp8", "e4m3_fast", E4M3, E4M3, BF16, 0.0f, true},
      {"fp8", "e4m3_e5m2_split", E4M3, E5M2, BF16, 0.0f, false},
      {"bf16", "bf16", BF16, BF16, BF16, 0.0f, false},
  };
  const std::vector<Variant>& variants =
      argc > 1 && std::string(argv[1]) == "operands" ? operands : wgrad;
  // The card under load first, so that every figure is at the sustained clock.
  const auto warm_until = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  while (std::chrono::steady_clock::now() < warm_until)
    time_gemm(lt, buf, 8192, 8192, 8192, E4M3, E4M3, BF16, 0.0f);
  for (size_t r = 0; r < 2 * shapes.size(); ++r)  // twice, the second time in reverse order
    for (const Variant& v : variants) {
      const size_t i = r < shapes.size() ? r : 2 * shapes.size() - 1 - r;
      const auto [sm, sn, sk] = shapes[i];
      const double us = time_gemm(lt, buf, sm, sn, sk, v.a, v.b, v.cd, v.beta, v.fast);
      std::printf("%s,%ld,%ld,%ld,%s,%s,%.2f\n", names[i].c_str(), static_cast<long>(sm),
                  static_cast<long>(sn), static_cast<long>(sk), v.type, v.name, us);
      std::fflush(stdout);
    }
  return 0;
}
