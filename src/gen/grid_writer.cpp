#include "gen/grid_writer.hpp"

#include <initializer_list>
#include <string>

namespace pgsim::gen {
namespace {

// Electrical scale, chosen to look like ibmpg1: wire segments of 0.05-0.2 ohm (thinner, more
// resistive metal at the bottom), 0.25 ohm pads to a 1.8 V supply, sub-mA loads, and a worst
// IR drop of about 5% of VDD on each net at the default pad and load density.
constexpr double kVdd = 1.8;
constexpr double kBottomOhmPerTrack = 0.1;
constexpr double kOhmRatioPerLayer = 2.5;  // each layer up is this much less resistive per track
constexpr double kWireJitter = 0.2;        // segment resistance x [0.9, 1.1)
constexpr double kViaOhm = 0.02;           // stacked vias above layer 2; layer 1-2 vias are 0 V sources as in IBM
constexpr double kPadOhm = 0.25;
constexpr double kLoadAmp = 3e-4;          // mean load; each is x [0.5, 1.5)
// Transient (GridParams::tran_stop), as ibmpg1t: package inductance, decaps, switching loads.
constexpr double kPadHenry = 1e-9;
constexpr double kDecapFarad = 1.2e-10;
constexpr double kPulsePeak = 50;          // x the load's DC value
constexpr double kPulseDelayStep = 5e-11;  // load k starts (k mod 5) steps late
constexpr double kTranStep = 1e-11;
constexpr int kPrintedLoads = 5;

// Counter-based randomness (splitmix64 of seed and element index): any element's value
// depends only on the seed and its place in the file, never on what was generated before.
double uniform(uint64_t seed, uint64_t stream, uint64_t index) {
  uint64_t z = seed * 0x9E3779B97F4A7C15ull + stream * 0xD1B54A32D192ED03ull + index;
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  z ^= z >> 31;
  return static_cast<double>(z >> 11) * 0x1.0p-53;
}
enum Stream : uint64_t { kWire = 1, kLoadPick, kLoadValue };

struct Node {
  int layer;
  int64_t x, y;
};

TextSink& operator<<(TextSink& out, const Node& n) { return out << 'n' << n.layer << '_' << n.x << '_' << n.y; }

class Writer {
 public:
  Writer(const GridParams& p, TextSink& out) : p_(p), s_(p.shape), out_(out) {}

  GridCounts run() {
    out_ << "* IBM-style power grid: " << p_.command_line << '\n';
    out_ << "* " << s_.total_nodes() << " nodes, " << s_.layers << " layers, " << s_.width << " x " << s_.height
         << " tracks, seed " << p_.seed << '\n';
    for (Net net : {Net::vdd, Net::gnd}) {
      for (int l = 1; l <= s_.layers; ++l) {
        wires(net, l);
        if (l > 1) vias(net, l);
      }
      pads(net);
    }
    loads();
    if (p_.tran_stop > 0) {
      out_ << ".tran " << kTranStep << ' ' << p_.tran_stop << '\n' << ".print tran" << printed_ << '\n';
    } else {
      out_ << ".op\n";
    }
    out_ << ".end\n";
    counts_.nodes = s_.total_nodes();
    return counts_;
  }

 private:
  const char* name(Net net) const { return net == Net::vdd ? "VDD" : "GND"; }

  // Node at position index i along stripe k of a layer.
  Node node(Net net, int layer, int64_t k, int64_t i) const {
    int64_t across = s_.stripes(net, layer).at(k), along = s_.positions(net, layer).at(i);
    return GridShape::horizontal(layer) ? Node{layer, along, across} : Node{layer, across, along};
  }

  void wires(Net net, int layer) {
    out_ << "* layer " << layer << ' ' << name(net) << (GridShape::horizontal(layer) ? " horizontal\n" : " vertical\n");
    Sequence stripes = s_.stripes(net, layer), along = s_.positions(net, layer);
    double ohm_per_track = kBottomOhmPerTrack;
    for (int l = 1; l < layer; ++l) ohm_per_track /= kOhmRatioPerLayer;
    double segment = ohm_per_track * static_cast<double>(along.step);
    for (int64_t k = 0; k < stripes.count; ++k)
      for (int64_t i = 0; i + 1 < along.count; ++i) {
        int64_t id = ++counts_.resistors;
        double r = segment * (1 - kWireJitter / 2 + kWireJitter * uniform(p_.seed, kWire, static_cast<uint64_t>(id)));
        out_ << 'R' << id << ' ' << node(net, layer, k, i) << ' ' << node(net, layer, k, i + 1) << ' ' << r << '\n';
      }
  }

  // Every node of `layer` sits on a stripe of the layer below: one via down from each.
  void vias(Net net, int layer) {
    out_ << "* vias " << name(net) << " from layer " << layer - 1 << " to " << layer << '\n';
    Sequence stripes = s_.stripes(net, layer), along = s_.positions(net, layer);
    for (int64_t k = 0; k < stripes.count; ++k)
      for (int64_t i = 0; i < along.count; ++i) {
        Node up = node(net, layer, k, i), down{layer - 1, up.x, up.y};
        int64_t id = ++counts_.vias;
        if (layer == 2)
          out_ << 'V' << id << ' ' << down << ' ' << up << " 0\n";
        else
          out_ << "Rv" << id << ' ' << down << ' ' << up << ' ' << kViaOhm << '\n';
      }
  }

  // A square lattice of pads on the top layer, each a resistor to an ideal source.
  void pads(Net net) {
    out_ << "* pads " << name(net) << '\n';
    int top = s_.layers;
    Sequence pad_stripes = s_.pad_stripes(net), pad_nodes = s_.pad_nodes(net);
    for (int64_t a = 0; a < pad_stripes.count; ++a)
      for (int64_t b = 0; b < pad_nodes.count; ++b) {
        int64_t k = pad_stripes.at(a), i = pad_nodes.at(b);
        Node n = node(net, top, k, i);
        int64_t id = ++counts_.pads;
        out_ << "rp" << id << ' ' << n << " _X_" << n << ' ' << kPadOhm << '\n';
        const double supply = net == Net::vdd ? kVdd : 0.0;
        if (p_.tran_stop > 0) {  // the source behind the package inductor
          out_ << "vp" << id << " _Y_" << n << " 0 " << supply << '\n';
          out_ << "lp" << id << " _Y_" << n << " _X_" << n << ' ' << kPadHenry << '\n';
          ++counts_.inductors;
        } else {
          out_ << "vp" << id << " _X_" << n << " 0 " << supply << '\n';
        }
      }
  }

  // Each load is a cell between a bottom VDD tap and the GND tap one track above it:
  // current flows out of VDD into ground and out of ground into the GND net.
  void loads() {
    out_ << "* loads\n";
    Sequence vdd_rows = s_.stripes(Net::vdd, 1), gnd_rows = s_.stripes(Net::gnd, 1);
    Sequence taps = s_.positions(Net::vdd, 1);
    for (int64_t k = 0; k < vdd_rows.count; ++k) {
      int64_t y = vdd_rows.at(k);
      if (!gnd_rows.contains(y + 1)) continue;
      for (int64_t i = 0; i < taps.count; ++i) {
        auto tap = static_cast<uint64_t>(k * taps.count + i);
        if (uniform(p_.seed, kLoadPick, tap) >= p_.load_fraction) continue;
        double amp = kLoadAmp * (0.5 + uniform(p_.seed, kLoadValue, tap));
        int64_t x = taps.at(i), id = ++counts_.loads;
        load(id, "_v ", Node{1, x, y}, true, amp);
        load(id, "_g ", Node{1, x, y + 1}, false, amp);
      }
    }
  }

  // One load current of a cell, out of `node` (into ground) when `from_node`, else into it; in a
  // transient netlist with its PULSE and decap.
  void load(int64_t id, const char* suffix, const Node& node, bool from_node, double amp) {
    out_ << "iB" << id << suffix;
    if (from_node) out_ << node << " 0 ";
    else out_ << "0 " << node << ' ';
    out_ << amp;
    if (p_.tran_stop <= 0) {
      out_ << '\n';
      return;
    }
    const auto k = static_cast<int>(transient_loads_++ % 5);
    out_ << " pulse(" << amp << ", " << kPulsePeak * amp << ", " << k * kPulseDelayStep << ", 1e-10, 1e-10, 1e-11, 3e-9)\n";
    out_ << "ciB" << id << suffix << node << " 0 " << kDecapFarad << '\n';
    ++counts_.capacitors;
    if (transient_loads_ <= kPrintedLoads)
      printed_ += " v(n" + std::to_string(node.layer) + '_' + std::to_string(node.x) + '_' + std::to_string(node.y) + ")";
  }

  const GridParams& p_;
  const GridShape& s_;
  TextSink& out_;
  GridCounts counts_;
  int64_t transient_loads_ = 0;  // load currents written so far (each cell has two)
  std::string printed_;          // the .print tran list
};

}  // namespace

GridCounts write_grid(const GridParams& params, TextSink& out) { return Writer(params, out).run(); }

}  // namespace pgsim::gen
