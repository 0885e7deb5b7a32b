#include "parser/waveform.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

#include "parser/spice_value.hpp"
#include "parser/shown.hpp"
#include "parser/text.hpp"

namespace pgsim {
namespace {

// The tokens from `first` on, split again so that '(' and ')' are items of their own:
// "pulse(0" "1)" and "pulse" "(" "0" "1" ")" both become pulse ( 0 1 ).
std::vector<std::string_view> items(const std::vector<std::string_view>& tokens, size_t first) {
  std::vector<std::string_view> out;
  for (size_t k = first; k < tokens.size(); ++k) {
    std::string_view t = tokens[k];
    size_t start = 0;
    for (size_t i = 0; i <= t.size(); ++i) {
      if (i < t.size() && t[i] != '(' && t[i] != ')') continue;
      if (i > start) out.push_back(t.substr(start, i - start));
      if (i < t.size()) out.push_back(t.substr(i, 1));
      start = i + 1;
    }
  }
  return out;
}

double number(std::string_view item, const char* what) {
  if (auto v = parse_spice_value(item)) return *v;
  throw SpecError(std::string(what) + ": " + shown(item) + " is not a finite number");
}

// keyword ( n n ... ) or keyword n n ...: the numbers; `at` moves past them.
std::vector<double> arguments(const std::vector<std::string_view>& it, size_t& at, const std::string& what) {
  std::vector<double> out;
  const bool parenthesized = at < it.size() && it[at] == "(";
  if (parenthesized) ++at;
  for (; at < it.size() && it[at] != ")"; ++at) {
    if (it[at] == "(") throw SpecError(what + ": unexpected '('");
    if (!parenthesized && !parse_spice_value(it[at])) break;
    out.push_back(number(it[at], what.c_str()));
  }
  if (parenthesized) {
    if (at >= it.size()) throw SpecError(what + ": missing ')'");
    ++at;
  } else if (at < it.size() && it[at] == ")") {
    throw SpecError(what + ": ')' without '('");
  }
  return out;
}

Waveform pulse(std::vector<double> a) {
  if (a.size() < 2 || a.size() > 7)
    throw SpecError("PULSE takes 2 to 7 values (v1 v2 td tr tf pw per), not " + std::to_string(a.size()));
  for (size_t k = 2; k < a.size(); ++k)
    if (a[k] < 0) throw SpecError("PULSE: the times td tr tf pw per must not be negative");
  a.resize(7, std::numeric_limits<double>::quiet_NaN());
  return {Waveform::Kind::Pulse, std::move(a)};
}

Waveform pwl(std::vector<double> a) {
  if (a.size() < 2 || a.size() % 2 != 0)
    throw SpecError("PWL takes pairs of time and value (t1 v1 t2 v2 ...), not " + std::to_string(a.size()) +
                    " values");
  for (size_t k = 2; k < a.size(); k += 2)
    if (a[k] < a[k - 2]) throw SpecError("PWL: the times must not decrease");
  return {Waveform::Kind::Pwl, std::move(a)};
}

// std::fmod(tt, per) for tt >= per > 0, bit for bit, without glibc's fmod (a third of a PULSE
// source's evaluation): tt - q per is exactly representable for the right quotient q (as fmod's
// result always is), so the fused multiply-add, which rounds only once, gives it exactly; the
// division's rounding can put q one off, which the checks correct.
double periodic_remainder(double tt, double per) {
  double q = std::floor(tt / per);
  double r = std::fma(-q, per, tt);
  if (r < 0) r = std::fma(-(q - 1), per, tt);
  else if (r >= per) r = std::fma(-(q + 1), per, tt);
  return r;
}

}  // namespace

double Waveform::at(double t) const {
  if (kind == Kind::Pulse) {
    const double v1 = p[0], v2 = p[1], td = p[2], tr = p[3], tf = p[4], pw = p[5], per = p[6];
    if (t < td) return v1;
    double tt = t - td;
    if (per > 0 && tt >= per) tt = periodic_remainder(tt, per);
    if (tt < tr) return v1 + (v2 - v1) * tt / tr;
    if (tt < tr + pw) return v2;
    if (tt < tr + pw + tf) return v2 + (v1 - v2) * (tt - tr - pw) / tf;
    return v1;
  }
  const size_t n = p.size() / 2;
  if (t <= p[0]) return p[1];
  if (t >= p[2 * (n - 1)]) return p[2 * n - 1];
  size_t k = 1;  // first point with time > t
  while (p[2 * k] <= t) ++k;
  const double t0 = p[2 * k - 2], v0 = p[2 * k - 1], t1 = p[2 * k], v1 = p[2 * k + 1];
  return v0 + (v1 - v0) * (t - t0) / (t1 - t0);
}

double Waveform::held_until(double t) const {
  constexpr double forever = std::numeric_limits<double>::infinity();
  if (kind == Kind::Pwl) {
    if (t < p[0]) return p[0];
    return t >= p[p.size() - 2] ? forever : t;
  }
  const double td = p[2], rest = p[3] + p[5] + p[4], per = p[6];  // rest: tr + pw + tf
  if (t < td) return td;
  const double tt = t - td;
  if (!(per > 0)) return tt >= rest ? forever : t;
  // Beyond a million periods the margin below would be within t's rounding.
  if (tt >= 1e6 * per) return t;
  const double phase = tt >= per ? periodic_remainder(tt, per) : tt;
  if (phase < rest) return t;
  return std::max(t, t + (per - phase) - 1e-6 * per);
}

void Waveform::resolve_defaults(double tstep, double tstop) {
  if (kind != Kind::Pulse) return;
  const double defaults[7] = {0, 0, 0, tstep, tstep, tstop, tstop};
  for (size_t k = 2; k < 7; ++k)
    if (std::isnan(p[k])) p[k] = defaults[k];
}

void TransientInputs::append(TransientInputs&& later, uint32_t element_offset) {
  for (SourceWaveform& w : later.waveforms) {
    w.element += element_offset;
    waveforms.push_back(std::move(w));
  }
  if (later.tran) tran = later.tran;
  for (PrintedNode& p : later.printed) printed.push_back(std::move(p));
}

const Waveform* TransientInputs::waveform_of(uint32_t element) const {
  auto it = std::lower_bound(waveforms.begin(), waveforms.end(), element,
                             [](const SourceWaveform& w, uint32_t k) { return w.element < k; });
  return it != waveforms.end() && it->element == element ? &it->waveform : nullptr;
}

bool is_source_spec(std::string_view token) {
  // Every source's value field is asked this: a number (the common case) is told by its first byte.
  if (token.empty() || !((token[0] >= 'a' && token[0] <= 'z') || (token[0] >= 'A' && token[0] <= 'Z'))) return false;
  std::string_view word = token.substr(0, std::min(token.find('('), token.size()));
  static constexpr std::string_view kKinds[] = {"ac", "pwl", "pulse", "sin", "exp", "sffm", "am", "trnoise", "trrandom"};
  for (std::string_view k : kKinds)
    if (iequals(word, k)) return true;
  return false;
}

std::optional<Waveform> parse_source_spec(const std::vector<std::string_view>& tokens, size_t first) {
  const std::vector<std::string_view> it = items(tokens, first);
  std::optional<Waveform> wave;
  size_t at = 0;
  while (at < it.size()) {
    const std::string_view word = it[at++];
    if (iequals(word, "ac")) {  // AC magnitude and phase: small-signal only, ignored
      for (int k = 0; k < 2 && at < it.size() && parse_spice_value(it[at]); ++k) ++at;
      continue;
    }
    const bool is_pulse = iequals(word, "pulse"), is_pwl = iequals(word, "pwl");
    if (!is_pulse && !is_pwl) {
      if (is_source_spec(word))
        throw SpecError(shown(word) + " sources are not supported (PULSE and PWL are)");
      throw SpecError("unexpected field " + shown(word) + " (expected PULSE(...), PWL(...) or AC)");
    }
    if (wave) throw SpecError("a source has more than one time function");
    std::vector<double> a = arguments(it, at, is_pulse ? "PULSE" : "PWL");
    wave = is_pulse ? pulse(std::move(a)) : pwl(std::move(a));
  }
  return wave;
}

TranSpec parse_tran(const std::vector<std::string_view>& tokens) {
  std::vector<double> v;
  for (size_t k = 1; k < tokens.size(); ++k) {
    if (iequals(tokens[k], "uic"))
      throw SpecError(".tran UIC is not supported: the transient starts from the DC operating point");
    v.push_back(number(tokens[k], ".tran"));
  }
  if (v.size() < 2 || v.size() > 4) throw SpecError(".tran takes TSTEP TSTOP [TSTART [TMAX]]");
  TranSpec spec;
  spec.tstep = v[0], spec.tstop = v[1];
  if (v.size() > 2) spec.tstart = v[2];
  if (v.size() > 3) spec.tmax = v[3];
  if (!(spec.tstep > 0)) throw SpecError(".tran: TSTEP must be positive");
  if (!(spec.tstart >= 0) || !(spec.tstop > spec.tstart))
    throw SpecError(".tran: need 0 <= TSTART < TSTOP");
  if (spec.tmax < 0) throw SpecError(".tran: TMAX must not be negative");
  return spec;
}

std::optional<std::vector<std::string>> parse_print(const std::vector<std::string_view>& tokens) {
  size_t first = 1;
  if (tokens.size() > 1) {
    if (iequals(tokens[1], "tran")) first = 2;
    else
      for (std::string_view other : {"dc", "ac", "op", "noise", "disto"})
        if (iequals(tokens[1], other)) return std::nullopt;
  }
  const std::vector<std::string_view> it = items(tokens, first);
  std::vector<std::string> names;
  for (size_t at = 0; at < it.size();) {
    const std::string_view what = it[at];
    if (!iequals(what, "v") || at + 3 >= it.size() || it[at + 1] != "(" || it[at + 3] != ")") {
      if (at + 1 < it.size() && it[at + 1] == "(" && !iequals(what, "v"))
        throw SpecError(".print: " + shown(what) + "(...) is not supported (only v(node) is)");
      throw SpecError(".print: expected v(node), found " + shown(what) +
                      (iequals(what, "v") ? " not followed by (node) of one node" : ""));
    }
    names.emplace_back(it[at + 2]);
    at += 4;
  }
  if (names.empty()) throw SpecError(".print tran names no node (write v(node) ...)");
  return names;
}

}  // namespace pgsim
