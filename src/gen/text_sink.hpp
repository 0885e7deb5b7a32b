#pragma once
// A large output buffer filled with std::to_chars: no allocation per line, one write(2)-sized
// fwrite per few MiB, so the generator is bound by memory bandwidth rather than formatting.
#include <charconv>
#include <cstdint>
#include <cstdio>
#include <string>
#include <string_view>
#include <vector>

namespace pgsim::gen {

class TextSink {
 public:
  // path "-" writes to standard output. Throws std::runtime_error when the file cannot be opened.
  explicit TextSink(const std::string& path);
  ~TextSink();
  TextSink(const TextSink&) = delete;
  TextSink& operator=(const TextSink&) = delete;

  TextSink& operator<<(std::string_view s) {
    reserve(s.size());
    s.copy(buf_.data() + used_, s.size());
    used_ += s.size();
    return *this;
  }
  TextSink& operator<<(char c) {
    reserve(1);
    buf_[used_++] = c;
    return *this;
  }
  TextSink& operator<<(int64_t v) { return convert(v); }
  TextSink& operator<<(uint64_t v) { return convert(v); }
  TextSink& operator<<(int v) { return convert(v); }
  // Values in IBM's layout: 7 significant digits, scientific (2.500000e-01).
  TextSink& operator<<(double v) { return convert(v, std::chars_format::scientific, 6); }

  // Writes what is buffered and closes; throws std::runtime_error on a failed write.
  void close();
  uint64_t bytes_written() const { return written_ + used_; }

 private:
  static constexpr size_t kCapacity = size_t{4} << 20;
  static constexpr size_t kMaxItem = 64;  // longest number to_chars may produce here

  void reserve(size_t n) {
    if (used_ + n > buf_.size()) flush(n);
  }
  template <typename T, typename... Format>
  TextSink& convert(T v, Format... format) {
    reserve(kMaxItem);
    auto r = std::to_chars(buf_.data() + used_, buf_.data() + buf_.size(), v, format...);
    used_ = static_cast<size_t>(r.ptr - buf_.data());
    return *this;
  }
  void flush(size_t room);

  std::string path_;
  std::FILE* file_ = nullptr;
  bool owns_file_ = false;
  std::vector<char> buf_;
  size_t used_ = 0;
  uint64_t written_ = 0;
};

}  // namespace pgsim::gen
