#include "hardware/device_file.h"

#include <gtest/gtest.h>

#include "core/diagnostics.h"

namespace orrery {
namespace {

constexpr const char* kMinimal = R"(name: tiny
compute_units: 4
matrix:
  bf16: 400 TFLOP/s
vector:
  fp32: 40 TFLOP/s
memory:
  bandwidth: 1000 GB/s
)";

std::string error_of(const std::string& yaml) {
  try {
    parse_device_yaml(yaml, "d.yaml");
  } catch (const InputError& e) {
    return e.what();
  }
  return "(no error)";
}

TEST(Device, MinimalFileGetsIdealDefaults) {
  const Device d = parse_device_yaml(kMinimal, "d.yaml");
  EXPECT_EQ(d.name, "tiny");
  EXPECT_EQ(d.compute_units, 4);
  EXPECT_DOUBLE_EQ(d.matrix.at(DType::BF16).in_flop_per_second(), 400e12);
  EXPECT_DOUBLE_EQ(d.vector.at(DType::FP32).in_flop_per_second(), 40e12);
  EXPECT_DOUBLE_EQ(d.memory_bandwidth.in_gb_per_second(), 1000);
  EXPECT_EQ(d.matrix_efficiency, 1.0);
  EXPECT_EQ(d.memory_efficiency, 1.0);
  EXPECT_EQ(d.kernel_overhead, Time::zero());
  EXPECT_TRUE(d.gemm_tiles.empty());
}

TEST(Device, ErrorsNameTheLineAndWhatWasExpected) {
  EXPECT_EQ(error_of(std::string(kMinimal) + "cache: 40 MiB\nspeed: fast\n"),
            "d.yaml:10: unknown key 'speed' in the device; expected one of: aliases, cache, "
            "compute_units, description, efficiency, gemm_tiling, matrix, memory, name, power, "
            "vector");
  EXPECT_EQ(error_of("name: x\ncompute_units: 4\nmatrix:\n  bf17: 1 TFLOP/s\n"),
            "d.yaml:4: expected a data type (fp64, fp32, tf32, fp16, bf16, fp8, int8) in matrix, "
            "found 'bf17'");
  EXPECT_EQ(error_of("name: x\ncompute_units: 4\nmatrix:\n  bf16: 1 TB/s\n"),
            "d.yaml:4: expected a positive arithmetic rate such as '989.4 TFLOP/s', found "
            "'1 TB/s'");
  EXPECT_NE(error_of(std::string(kMinimal) + "efficiency:\n  matrix: 1.2\n")
                .find("d.yaml:10: expected a number in (0, 1], found '1.2'"),
            std::string::npos);
  EXPECT_NE(error_of(std::string(kMinimal) + "gemm_tiling:\n  tiles: [128x]\n")
                .find("expected a tile such as '128x128'"),
            std::string::npos);
  EXPECT_NE(error_of("name: x\n").find("expected 'compute_units' in the device"),
            std::string::npos);
}

TEST(DevicePresets, TheA100AndHopperDevicesWithDatasheetPeaks) {
  const auto names = device_preset_names();
  for (const char* wanted :
       {"A100-SXM4-40GB", "A100-SXM4-80GB", "H100-SXM5-80GB", "H200-SXM-141GB", "DFModel-A100"})
    EXPECT_NE(std::find(names.begin(), names.end(), wanted), names.end()) << wanted;

  // Aliases and case do not matter; the cluster presets' gpu names resolve.
  EXPECT_EQ(load_device("a100-40gb").name, "A100-SXM4-40GB");
  EXPECT_EQ(load_device("H100-SXM").name, "H100-SXM5-80GB");
  EXPECT_EQ(load_device("h200").name, "H200-SXM-141GB");

  const Device a100 = load_device("A100-SXM4-80GB");
  EXPECT_DOUBLE_EQ(a100.matrix.at(DType::BF16).in_tflop_per_second(), 312);
  EXPECT_DOUBLE_EQ(a100.memory_bandwidth.in_gb_per_second(), 2039);
  EXPECT_EQ(a100.compute_units, 108);
  EXPECT_DOUBLE_EQ(load_device("A100-40GB").memory_bandwidth.in_gb_per_second(), 1555);
  const Device h200 = load_device("H200");
  EXPECT_DOUBLE_EQ(h200.memory_bandwidth.in_gb_per_second(), 4800);
  EXPECT_DOUBLE_EQ(h200.matrix.at(DType::BF16).in_tflop_per_second(), 989.4);

  // Seed 004's chip: 2 * 16 * 16 * 432 systolic MACs at 1.41 GHz (float32 clock) and 2039 GB/s.
  const Device chip = load_device("dfmodel-seed004");
  EXPECT_DOUBLE_EQ(chip.matrix.at(DType::BF16).in_flop_per_second(), 311869.4326171875e9);
  EXPECT_NEAR(chip.matrix.at(DType::BF16).in_flop_per_second(), 2.0 * 16 * 16 * 432 * 1.41e9,
              2.0 * 16 * 16 * 432 * 1e9 * 1e-7);
  EXPECT_DOUBLE_EQ(chip.memory_bandwidth.in_gb_per_second(), 2039);
  EXPECT_EQ(chip.matrix_efficiency, 0.9);
}

// The Blackwell and MI300X presets against the figures their headers cite.
// A file's exposed epilogue shares map operand types to fractions in [0, 1] / each read as
// given, 0 allowed (a hidden epilogue); an unknown type or a share above 1 is an error on its line.
TEST(Device, ExposedEpilogueMapsTypesToShares) {
  const Device d = parse_device_yaml(
      std::string(kMinimal) + "efficiency:\n  exposed_epilogue: {fp8: 0.6, bf16: 0}\n", "d.yaml");
  EXPECT_DOUBLE_EQ(d.exposed_epilogue_by_type.at(DType::FP8), 0.6);
  EXPECT_DOUBLE_EQ(d.exposed_epilogue_by_type.at(DType::BF16), 0.0);
  EXPECT_TRUE(parse_device_yaml(kMinimal, "d.yaml").exposed_epilogue_by_type.empty());
  EXPECT_EQ(error_of(std::string(kMinimal) + "efficiency:\n  exposed_epilogue: {fp9: 0.5}\n"),
            "d.yaml:10: expected a data type such as fp8 or bf16 in exposed_epilogue");
  EXPECT_NE(error_of(std::string(kMinimal) + "efficiency:\n  exposed_epilogue: {fp8: 1.5}\n")
                .find("d.yaml:10: expected a number in [0, 1], found '1.5'"),
            std::string::npos);
}

TEST(DevicePresets, BlackwellAndMi300xMatchTheirSources) {
  // HGX B200 (8 GPUs, sparse): FP16/BF16 36 PFLOPS, FP8 72 PFLOPS -> 2.25 / 4.5 dense per GPU;
  // DGX B200: 1,440 GB and 64 TB/s for 8 GPUs.
  const Device b200 = load_device("B200");
  EXPECT_EQ(b200.name, "B200-SXM-180GB");
  EXPECT_DOUBLE_EQ(b200.matrix.at(DType::BF16).in_tflop_per_second(), 2250);
  EXPECT_DOUBLE_EQ(b200.matrix.at(DType::FP8).in_tflop_per_second(), 4500);
  EXPECT_DOUBLE_EQ(b200.memory_bandwidth.in_gb_per_second(), 8000);
  EXPECT_EQ(b200.memory_capacity, Bytes(180'000'000'000));
  EXPECT_EQ(b200.compute_units, 148);
  // GB200 NVL72 (72 GPUs, sparse): FP16/BF16 360 PFLOPS, FP8 720 PFLOPS; 13.4 TB at 576 TB/s.
  const Device gb200 = load_device("gb200");
  EXPECT_EQ(gb200.name, "GB200-186GB");
  EXPECT_DOUBLE_EQ(gb200.matrix.at(DType::BF16).in_tflop_per_second(), 2500);
  EXPECT_DOUBLE_EQ(gb200.matrix.at(DType::FP8).in_tflop_per_second(), 5000);
  EXPECT_DOUBLE_EQ(gb200.memory_bandwidth.in_gb_per_second(), 8000);
  // AMD MI300X (ROCm MI300 microarchitecture table): 304 CUs, 1307.4 TFLOPS BF16, 5.3 TB/s.
  const Device mi300x = load_device("MI300X");
  EXPECT_EQ(mi300x.name, "MI300X-192GB");
  EXPECT_EQ(mi300x.compute_units, 304);
  EXPECT_DOUBLE_EQ(mi300x.matrix.at(DType::BF16).in_tflop_per_second(), 1307.4);
  EXPECT_DOUBLE_EQ(mi300x.matrix.at(DType::FP8).in_tflop_per_second(), 2614.9);
  EXPECT_DOUBLE_EQ(mi300x.memory_bandwidth.in_gb_per_second(), 5300);
  EXPECT_EQ(mi300x.memory_capacity, Bytes(192'000'000'000));
  // Unmeasured efficiencies are the H100's (placeholders, as the headers say).
  const Device h100 = load_device("H100");
  for (const Device* d : {&b200, &gb200, &mi300x}) {
    EXPECT_EQ(d->matrix_efficiency, h100.matrix_efficiency) << d->name;
    EXPECT_EQ(d->memory_efficiency, h100.memory_efficiency) << d->name;
    EXPECT_EQ(d->kernel_overhead, h100.kernel_overhead) << d->name;
  }
}

TEST(DevicePresets, UnknownNameListsThePresets) {
  try {
    load_device("TPU-v9");
    FAIL();
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("expected a device preset (A100-SXM4-40GB"),
              std::string::npos)
        << e.what();
  }
}

TEST(Device, AKeyThatIsNoNameIsAnInputError) {
  // A device file holding "? :" (a key that is itself a mapping to yaml-cpp; found by
  // fuzz_device_yaml), at the top or among the rates, and a rate given twice / an error at its
  // line, because yaml-cpp's conversion exception escaped the reader before and a repeated type
  // kept only its last rate silently.
  EXPECT_EQ(error_of("? :\n"), "d.yaml:1: expected a key name, found a mapping");
  EXPECT_EQ(error_of("name: x\ncompute_units: 4\nmatrix:\n  ? :\n"),
            "d.yaml:4: expected a key name, found a mapping");
  EXPECT_EQ(error_of("name: x\ncompute_units: 4\nmatrix:\n  bf16: 1 TFLOP/s\n  bf16: 2 TFLOP/s\n"),
            "d.yaml:5: key 'bf16' given twice (first at line 4)");
}

}  // namespace
}  // namespace orrery
