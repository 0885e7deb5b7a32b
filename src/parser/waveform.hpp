#pragma once
// What a netlist says about a transient analysis, parsed from tokens the line tokenizer made:
// source waveforms (PULSE, PWL), `.tran` and `.print tran v(...)`. These live in side tables of
// the Netlist (TransientInputs) so the element list stays the same as for DC, and so a parser
// that reads the file in chunks can merge per-chunk tables with append().
#include <cstdint>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

namespace pgsim {

// The time function of an independent source, in volts or amperes.
struct Waveform {
  enum class Kind : uint8_t { Pulse, Pwl };
  Kind kind = Kind::Pulse;
  // Pulse: v1 v2 td tr tf pw per. Fields the netlist left out are NaN until resolve_defaults().
  // Pwl: t0 v0 t1 v1 ..., times non-decreasing; v0 before t0, the last value after the last time.
  std::vector<double> p;

  double at(double t) const;
  // A time until which the value stays what at(t) gives: at(t') == at(t) for every t' in
  // [t, held_until(t)); t itself when it cannot say. A PULSE resting at v1 (before td, or
  // between a fall and the next period's rise) holds until the next rise, less a millionth of the
  // period (so at()'s rounding of t - td can never put t' past it), or for ever without a period;
  // a PWL holds before its first point and after its last. ibmpg1t's pulses rest 93% of the time.
  double held_until(double t) const;
  double first_value() const { return kind == Kind::Pulse ? p[0] : p[1]; }  // a source's DC value when it gives none
  // SPICE's defaults for PULSE fields left out: td 0, tr and tf the time step, pw and per the stop time.
  void resolve_defaults(double tstep, double tstop);
};

struct TranSpec {
  double tstep = 0, tstop = 0, tstart = 0, tmax = 0;  // tmax 0: not given
  uint32_t file = 0, line = 0;
};

struct PrintedNode {
  std::string name;  // as written in v(...)
  uint32_t file = 0, line = 0;
};

struct SourceWaveform {
  uint32_t element;  // index into Netlist::elements
  Waveform waveform;
};

struct TransientInputs {
  std::vector<SourceWaveform> waveforms;  // by element index, ascending
  std::optional<TranSpec> tran;           // the last .tran line
  std::vector<PrintedNode> printed;       // .print tran v(...) in order, duplicates kept

  // Appends a later chunk's tables; its element indices are shifted by element_offset.
  void append(TransientInputs&& later, uint32_t element_offset);
  // The waveform of element k, or nullptr (binary search in waveforms).
  const Waveform* waveform_of(uint32_t element) const;
};

// Parse failures: the message without file:line; the parser adds the location.
class SpecError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// True when a source's token starts a transient or AC specification (PULSE, PWL, SIN, AC, ...).
bool is_source_spec(std::string_view token);
// The tokens after a source's DC value (or after its nodes when it has none): an optional
// `AC mag [phase]` (ignored) and at most one PULSE(...) or PWL(...). Parentheses may stand
// alone or stick to a token. Returns nothing when there is no time function; throws SpecError
// for SIN, EXP, SFFM, AM, bad numbers and anything else that is not understood.
std::optional<Waveform> parse_source_spec(const std::vector<std::string_view>& tokens, size_t first);
// `.tran TSTEP TSTOP [TSTART [TMAX]]` (tokens[0] is ".tran"; a trailing UIC is refused).
TranSpec parse_tran(const std::vector<std::string_view>& tokens);
// `.print tran v(a) v(b) ...` (tokens[0] is ".print"): the node names, or nothing for another
// analysis (`.print dc ...`), which the caller ignores.
std::optional<std::vector<std::string>> parse_print(const std::vector<std::string_view>& tokens);

}  // namespace pgsim
