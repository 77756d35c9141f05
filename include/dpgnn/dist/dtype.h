// Element types of the flat buffers that dist/ moves.
//
// dist/ knows nothing about tensors, graphs or models: a buffer is a pointer, an element
// count and one of these element types. Each backend maps the enum to its own type
// (MPI_FLOAT, ncclFloat32, ...) inside src/dist/, so no backend header leaks out.
#pragma once

#include <cstddef>
#include <cstdint>

namespace dpgnn::dist {

enum class DType : std::uint8_t { f32, f64, i32, i64, u8 };

// Size of one element in bytes.
std::size_t dtype_size(DType dtype);
// "f32", "f64", "i32", "i64", "u8": for error messages and logs.
const char* dtype_name(DType dtype);

// The DType of a C++ element type, so callers can write `comm.allreduce_sum(ptr, n)`.
template <class T>
struct DTypeOf;
template <>
struct DTypeOf<float> {
  static constexpr DType value = DType::f32;
};
template <>
struct DTypeOf<double> {
  static constexpr DType value = DType::f64;
};
template <>
struct DTypeOf<std::int32_t> {
  static constexpr DType value = DType::i32;
};
template <>
struct DTypeOf<std::int64_t> {
  static constexpr DType value = DType::i64;
};
template <>
struct DTypeOf<std::uint8_t> {
  static constexpr DType value = DType::u8;
};
template <class T>
inline constexpr DType dtype_of = DTypeOf<T>::value;

}  // namespace dpgnn::dist
