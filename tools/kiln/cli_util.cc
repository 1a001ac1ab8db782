#include "cli_util.h"

#include <cmath>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "ir/builder.h"
#include "onnx/onnx_io.h"
#include "support/npy.h"

namespace kiln::cli {
namespace {

namespace fs = std::filesystem;

std::string Lower(std::string s) {
  for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

std::string OneLine(std::string s) {
  for (char& c : s)
    if (c == '\n' || c == '\r') c = ' ';
  return s;
}

std::string FormatDouble(double v) {
  char buf[64];
  std::snprintf(buf, sizeof(buf), "%.6g", v);
  return buf;
}

}  // namespace

int ReportError(const std::string& cmd, const Status& s, int code) {
  std::fprintf(stderr, "kiln %s: error: %s\n", cmd.c_str(), OneLine(s.ToString()).c_str());
  return code;
}

Result<Shape> ParseShape(const std::string& text) {
  Shape shape;
  if (text.empty() || text == "scalar") return shape;
  std::string tok;
  std::stringstream ss(text);
  while (std::getline(ss, tok, 'x')) {
    if (tok.empty() || tok.size() > 18 || tok.find_first_not_of("0123456789") != std::string::npos)
      return InvalidArgument("bad shape '" + text + "': use dims separated by 'x', e.g. 1x3x40x40");
    shape.push_back(std::stoll(tok));
  }
  if (!text.empty() && text.back() == 'x') return InvalidArgument("bad shape '" + text + "': trailing 'x'");
  auto n = CheckedElementCount(shape);
  if (!n.ok()) return n.status();
  return shape;
}

Result<std::pair<std::string, std::string>> SplitAssignment(const std::string& text, const std::string& option) {
  const size_t eq = text.find('=');
  if (eq == std::string::npos || eq == 0)
    return InvalidArgument(option + " '" + text + "' must have the form NAME=VALUE");
  return std::make_pair(text.substr(0, eq), text.substr(eq + 1));
}

Result<std::map<std::string, std::string>> ParseAssignments(const std::vector<std::string>& items, const std::string& option) {
  std::map<std::string, std::string> out;
  for (const auto& it : items) {
    KILN_ASSIGN_OR_RETURN(auto kv, SplitAssignment(it, option));
    if (!out.emplace(kv.first, kv.second).second) return InvalidArgument(option + " given twice for '" + kv.first + "'");
  }
  return out;
}

Result<std::map<std::string, Shape>> ParseShapeAssignments(const std::vector<std::string>& items) {
  KILN_ASSIGN_OR_RETURN(auto kv, ParseAssignments(items, "--shape"));
  std::map<std::string, Shape> out;
  for (const auto& [n, v] : kv) {
    auto s = ParseShape(v);
    if (!s.ok()) return s.status().WithContext("--shape " + n);
    out[n] = *s;
  }
  return out;
}

std::vector<IoInfo> InputInfos(const ir::Graph& g) {
  std::vector<IoInfo> out;
  for (const ir::Value& v : g.inputs) {
    IoInfo io;
    io.name = v.name;
    io.optional = g.IsInitializer(v.name);
    const ir::TypeInfo& t = v.type;
    io.kind = t.kind == ir::TypeInfo::Kind::kTensor     ? "tensor"
              : t.kind == ir::TypeInfo::Kind::kSequence ? "sequence"
              : t.kind == ir::TypeInfo::Kind::kOptional ? "optional"
                                                        : "unknown";
    if (t.kind == ir::TypeInfo::Kind::kTensor) {
      io.dtype = t.dtype;
      if (t.shape) {
        io.has_shape = true;
        for (const ir::Dim& d : *t.shape) {
          io.shape.push_back(d.known() ? d.value : -1);
          io.dim_names.push_back(d.param);
        }
      }
    }
    out.push_back(std::move(io));
  }
  return out;
}

Result<Datum> ReadInputFile(const std::string& path, const IoInfo& io, const Shape* shape) {
  std::error_code ec;
  if (!fs::exists(path, ec)) return NotFound("input file '" + path + "' for input '" + io.name + "' does not exist");
  const std::string ext = Lower(fs::path(path).extension().string());
  if (ext == ".npy") {
    auto t = npy::ReadFile(path);
    if (!t.ok()) return t.status().WithContext("input '" + io.name + "'");
    return Datum(std::move(t).value());
  }
  if (ext == ".pb") {
    ir::TypeInfo::Kind kind = io.kind == "sequence" ? ir::TypeInfo::Kind::kSequence
                              : io.kind == "optional" ? ir::TypeInfo::Kind::kOptional
                                                      : ir::TypeInfo::Kind::kTensor;
    auto d = onnx_io::ReadDatumFile(path, kind);
    if (!d.ok()) return d.status().WithContext("input '" + io.name + "'");
    return d;
  }
  if (ext == ".bin" || ext == ".raw") {
    if (io.dtype == DType::kUndefined || io.dtype == DType::kString)
      return InvalidArgument("input '" + io.name + "': a raw .bin file needs a numeric model dtype, the model declares " +
                             DTypeName(io.dtype));
    Shape s;
    if (shape) {
      s = *shape;
    } else {
      bool static_shape = io.has_shape;
      for (int64_t d : io.shape) static_shape = static_shape && d >= 0;
      if (!static_shape)
        return InvalidArgument("input '" + io.name + "' has shape " + io.ShapeString() + ": give the shape of raw file '" +
                               path + "' with --shape " + io.name + "=DIMS (e.g. 1x3x40x40)");
      s = io.shape;
    }
    auto t = Tensor::Allocate(io.dtype, s);
    if (!t.ok()) return t.status().WithContext("input '" + io.name + "'");
    std::ifstream in(path, std::ios::binary);
    if (!in) return IoError("cannot open input file '" + path + "'");
    in.seekg(0, std::ios::end);
    const auto size = static_cast<uint64_t>(in.tellg());
    if (size != t->nbytes())
      return InvalidArgument("raw input file '" + path + "' holds " + std::to_string(size) + " bytes, " + DTypeName(io.dtype) +
                             ShapeToString(s) + " needs " + std::to_string(t->nbytes()));
    in.seekg(0);
    in.read(static_cast<char*>(t->raw()), static_cast<std::streamsize>(size));
    if (!in) return IoError("failed reading '" + path + "'");
    return Datum(std::move(t).value());
  }
  return InvalidArgument("input file '" + path + "': unknown extension '" + ext + "' (use .npy, .pb or .bin)");
}

Result<Tensor> GenerateInput(const IoInfo& io, uint64_t seed, const Shape* shape, std::string* note) {
  note->clear();
  if (io.kind != "tensor")
    return Unimplemented("input '" + io.name + "' is a " + io.kind + ": kiln cannot generate it, give it with --input");
  if (io.dtype == DType::kUndefined)
    return InvalidArgument("input '" + io.name + "' has no declared dtype: give it with --input");
  Shape s;
  if (shape) {
    s = *shape;
  } else if (!io.has_shape) {
    return InvalidArgument("input '" + io.name + "' has unknown rank: give its shape with --shape " + io.name + "=DIMS");
  } else {
    bool dynamic = false;
    for (int64_t d : io.shape) {
      dynamic = dynamic || d < 0;
      s.push_back(d < 0 ? 1 : d);
    }
    if (dynamic)
      *note = "note: input '" + io.name + "' has dynamic dims " + io.ShapeString() + "; using " + ShapeToString(s) +
              " (set it with --shape " + io.name + "=DIMS)";
  }
  ir::SeededRng rng(ir::SeedFor(seed, io.name));
  const bool is_float = DTypeIsFloat(io.dtype);
  auto t = ir::RandomTensor(io.dtype, s, rng, is_float ? -1.0 : 0.0, is_float ? 1.0 : 10.0);
  if (!t.ok()) return t.status().WithContext("input '" + io.name + "'");
  return t;
}

std::string SafeFileName(const std::string& name) {
  std::string out;
  for (char c : name) out += (std::isalnum(static_cast<unsigned char>(c)) || c == '.' || c == '_' || c == '-') ? c : '_';
  if (out.empty() || out == "." || out == "..") out = "_" + out;
  if (out.size() > 200) out.resize(200);
  return out;
}

std::string SummaryLine(const std::string& name, const Tensor& t) {
  std::string line = name + "  " + t.Describe();
  if (t.dtype() == DType::kString || t.numel() == 0) return line + (t.numel() == 0 ? "  (empty)" : "");
  double mn = INFINITY, mx = -INFINITY, sum = 0;
  int64_t nan = 0, inf = 0, finite = 0;
  for (int64_t i = 0; i < t.numel(); ++i) {
    const double v = t.GetAsDouble(i);
    if (std::isnan(v)) { ++nan; continue; }
    if (std::isinf(v)) ++inf;
    mn = std::min(mn, v);
    mx = std::max(mx, v);
    if (std::isfinite(v)) { sum += v; ++finite; }
  }
  if (nan == t.numel()) return line + "  all NaN";
  line += "  min=" + FormatDouble(mn) + " max=" + FormatDouble(mx) + " mean=" + FormatDouble(finite ? sum / static_cast<double>(finite) : NAN);
  if (nan) line += " nan=" + std::to_string(nan);
  if (inf) line += " inf=" + std::to_string(inf);
  return line;
}

std::string SummaryLine(const std::string& name, const Datum& d) {
  if (d.is_tensor()) return SummaryLine(name, d.tensor());
  return name + "  " + d.Describe();
}

Status WriteTensorNpy(const std::string& path, const Tensor& t, std::string* note) {
  note->clear();
  if (t.dtype() == DType::kBFloat16) {
    Tensor f = Tensor::Zeros(DType::kFloat32, t.shape());
    for (int64_t i = 0; i < t.numel(); ++i) f.SetFromDouble(i, t.GetAsDouble(i));
    *note = "note: '" + path + "' holds the bfloat16 values widened to float32 (NumPy has no bfloat16)";
    return npy::WriteFile(path, f);
  }
  return npy::WriteFile(path, t);
}

Result<std::map<std::string, Datum>> MakeFeeds(const std::vector<IoInfo>& inputs, const FeedArgs& a, bool generate_only) {
  KILN_ASSIGN_OR_RETURN(auto files, ParseAssignments(a.inputs, "--input"));
  KILN_ASSIGN_OR_RETURN(auto shapes, ParseShapeAssignments(a.shapes));
  std::map<std::string, const IoInfo*> by_name;
  for (const IoInfo& io : inputs) by_name[io.name] = &io;
  std::string names;
  for (const IoInfo& io : inputs)
    if (!io.optional) names += (names.empty() ? "'" : ", '") + io.name + "'";
  for (const auto& [n, f] : files)
    if (!by_name.count(n)) return InvalidArgument("--input '" + n + "': the model has no input of that name (inputs: " + names + ")");
  for (const auto& [n, sh] : shapes)
    if (!by_name.count(n)) return InvalidArgument("--shape '" + n + "': the model has no input of that name (inputs: " + names + ")");
  std::map<std::string, Datum> feeds;
  for (const IoInfo& io : inputs) {
    auto sit = shapes.find(io.name);
    const Shape* shape = sit == shapes.end() ? nullptr : &sit->second;
    auto fit = files.find(io.name);
    if (fit != files.end()) {
      if (generate_only) continue;
      KILN_ASSIGN_OR_RETURN(Datum d, ReadInputFile(fit->second, io, shape));
      if (shape && d.is_tensor() && d.tensor().shape() != *shape)
        return InvalidArgument("input '" + io.name + "': file '" + fit->second + "' holds shape " + ShapeToString(d.tensor().shape()) +
                               ", --shape says " + ShapeToString(*shape));
      feeds[io.name] = std::move(d);
      continue;
    }
    if (io.optional) continue;  // an initializer's value is the default
    std::string note;
    KILN_ASSIGN_OR_RETURN(Tensor t, GenerateInput(io, a.seed, shape, &note));
    if (!note.empty() && !a.quiet) std::fprintf(stderr, "%s\n", note.c_str());
    feeds[io.name] = Datum(std::move(t));
  }
  return feeds;
}

}  // namespace kiln::cli
