// np.einsum: the subscripts parsed, repeated names' diagonals taken, names of
// one operand summed, then the operands contracted pairwise as matrix products.
#include "frontend/Graph.h"

#include <tinymlir/index.h>
#include <tinymlir/numpy.h>

#include <algorithm>
#include <cctype>
#include <map>
#include <string>
#include <vector>

namespace tinymlir {
using detail::fail;

namespace {

/// One operand of np.einsum and the names of its axes, one char each: the
/// subscripts' letters, and chars from 0x80 up for the axes '...' stands for
/// (the last of them 0x80 + the most any operand has - 1, so that they align
/// from the right, as NumPy broadcasts them).
struct EinsumTerm {
  Tensor t;
  std::string names;
};

/// Each name `term` repeats, its axes' diagonal (NumPy's 'ii->i'), last.
EinsumTerm collapsed(EinsumTerm term, size_t operand) {
  for (size_t i = 0; i < term.names.size(); ++i) {
    const size_t j = term.names.find(term.names[i], i + 1);
    if (j == std::string::npos)
      continue;
    const int64_t p = term.t.shape()[i], q = term.t.shape()[j];
    if (p != q)
      fail("einsum", "dimensions in operand " + std::to_string(operand) +
                         " for collapsing index '" + term.names[i] + "' don't match (" +
                         std::to_string(p) + " != " + std::to_string(q) + ")");
    const char c = term.names[i];
    term.t = diagonal(term.t, 0, static_cast<int64_t>(i), static_cast<int64_t>(j));
    term.names.erase(j, 1);
    term.names.erase(i, 1);
    term.names += c;
    i = static_cast<size_t>(-1); // again from the first
  }
  return term;
}

/// The permutation taking axes named `from` to the order `to`.
std::vector<int64_t> einsumOrder(const std::string &from, const std::string &to) {
  std::vector<int64_t> perm;
  for (char c : to)
    perm.push_back(static_cast<int64_t>(from.find(c)));
  return perm;
}

/// Two terms contracted: the names in both and not in `keep` summed, the
/// others kept, as one (batched) matrix product: batch names (in both and in
/// `keep`) lead, then a's own, then b's.
EinsumTerm contracted(const EinsumTerm &x, const EinsumTerm &y, const std::string &keep) {
  std::string batch, summed;
  for (char c : x.names)
    if (y.names.find(c) != std::string::npos)
      (keep.find(c) != std::string::npos ? batch : summed) += c;
  std::string freeA, freeB;
  for (char c : x.names)
    if (y.names.find(c) == std::string::npos)
      freeA += c;
  for (char c : y.names)
    if (x.names.find(c) == std::string::npos)
      freeB += c;
  std::map<char, int64_t> sizes;
  for (size_t i = 0; i < x.names.size(); ++i)
    sizes[x.names[i]] = x.t.shape()[i];
  for (size_t i = 0; i < y.names.size(); ++i)
    sizes[y.names[i]] = y.t.shape()[i];
  auto product = [&](const std::string &names) {
    int64_t p = 1;
    for (char c : names)
      p *= sizes[c];
    return p;
  };
  Shape bshape;
  for (char c : batch)
    bshape.push_back(sizes[c]);
  auto with = [&](std::initializer_list<int64_t> tail) {
    Shape s = bshape;
    s.insert(s.end(), tail);
    return s;
  };
  const Tensor left = reshape(transpose(x.t, einsumOrder(x.names, batch + freeA + summed)),
                              with({product(freeA), product(summed)}));
  const Tensor right = reshape(transpose(y.t, einsumOrder(y.names, batch + summed + freeB)),
                               with({product(summed), product(freeB)}));
  Tensor result =
      summed.empty() // an outer product per batch: exact, as NumPy's
          ? reshape(left, with({product(freeA), 1})) * reshape(right, with({1, product(freeB)}))
          : matmul(left, right);
  Shape shape = bshape;
  for (char c : freeA + freeB)
    shape.push_back(sizes[c]);
  return {reshape(result, shape), batch + freeA + freeB};
}

} // namespace

Tensor einsum(const std::string &subscripts, const std::vector<Tensor> &given,
              std::optional<DType> dtype, std::string_view casting) {
  std::vector<Tensor> operands = given;
  if (dtype)
    for (Tensor &t : operands)
      t = castByRule("einsum", t, *dtype, casting);
  std::string spec;
  for (char c : subscripts)
    if (c != ' ')
      spec += c;
  const size_t arrow = spec.find("->");
  std::vector<std::string> inputs;
  {
    const std::string lhs = spec.substr(0, arrow);
    size_t start = 0;
    for (size_t comma; (comma = lhs.find(',', start)) != std::string::npos; start = comma + 1)
      inputs.push_back(lhs.substr(start, comma - start));
    inputs.push_back(lhs.substr(start));
  }
  if (inputs.size() != operands.size())
    fail("einsum", std::string(inputs.size() > operands.size() ? "more" : "fewer") +
                       " operands provided to einstein sum function than specified in the "
                       "subscripts string");
  // Each operand's names, '...' as the chars of its broadcast axes.
  const auto subscriptsOf = [](const std::string &s) {
    const size_t dots = s.find("...");
    std::string letters = dots == std::string::npos ? s : s.substr(0, dots) + s.substr(dots + 3);
    for (char c : letters)
      if (!std::isalpha(static_cast<unsigned char>(c)))
        fail("einsum", std::string("invalid subscript '") + c +
                           "' in einstein sum subscripts string, subscripts must be letters");
    return std::pair{dots, letters};
  };
  int64_t broadcastAxes = 0;
  for (size_t k = 0; k < inputs.size(); ++k) {
    const auto [dots, letters] = subscriptsOf(inputs[k]);
    const int64_t extra = operands[k].rank() - static_cast<int64_t>(letters.size());
    if (extra < 0 || (extra > 0 && dots == std::string::npos))
      fail("einsum", extra < 0 ? "einstein sum subscripts string contains too many subscripts "
                                 "for operand " +
                                     std::to_string(k)
                               : "operand has more dimensions than subscripts given in einstein "
                                 "sum, but no '...' ellipsis provided to broadcast the extra "
                                 "dimensions.");
    broadcastAxes = std::max(broadcastAxes, extra);
  }
  const auto dotsAs = [&](int64_t n) { // the chars of the last n broadcast axes
    std::string s;
    for (int64_t i = broadcastAxes - n; i < broadcastAxes; ++i)
      s += static_cast<char>(0x80 + i);
    return s;
  };
  std::vector<EinsumTerm> terms;
  std::string all;
  for (size_t k = 0; k < inputs.size(); ++k) {
    const auto [dots, letters] = subscriptsOf(inputs[k]);
    const int64_t extra = operands[k].rank() - static_cast<int64_t>(letters.size());
    std::string names = dots == std::string::npos ? letters
                                                  : inputs[k].substr(0, dots) + dotsAs(extra) +
                                                        inputs[k].substr(dots + 3);
    all += names;
    terms.push_back(collapsed({operands[k], std::move(names)}, k));
  }
  std::string output;
  if (arrow == std::string::npos) { // implicit: '...', then the letters seen once, sorted
    for (char c : all)
      if (std::isalpha(static_cast<unsigned char>(c)) && std::count(all.begin(), all.end(), c) == 1)
        output += c;
    std::sort(output.begin(), output.end());
    output = dotsAs(broadcastAxes) + output;
  } else {
    const std::string rhs = spec.substr(arrow + 2);
    const size_t dots = rhs.find("...");
    for (char c : subscriptsOf(rhs).second) {
      if (std::count(rhs.begin(), rhs.end(), c) != 1)
        fail("einsum", std::string("einstein sum subscripts string includes output subscript '") +
                           c + "' multiple times");
      if (all.find(c) == std::string::npos)
        fail("einsum", std::string("einstein sum subscripts string included output subscript '") +
                           c + "' which never appeared in an input");
    }
    output = dots == std::string::npos
                 ? rhs
                 : rhs.substr(0, dots) + dotsAs(broadcastAxes) + rhs.substr(dots + 3);
  }
  // Every name's size: a size-1 axis broadcasts against the others, as NumPy's.
  std::map<char, int64_t> sizes;
  for (const EinsumTerm &term : terms)
    for (size_t i = 0; i < term.names.size(); ++i) {
      const int64_t n = term.t.shape()[i];
      int64_t &s = sizes.try_emplace(term.names[i], n).first->second;
      if (s != n && s != 1 && n != 1)
        fail("einsum", std::string("index '") + term.names[i] + "' has sizes " + std::to_string(s) +
                           " and " + std::to_string(n));
      s = std::max(s, n);
    }
  for (EinsumTerm &term : terms) {
    Shape full;
    for (char c : term.names)
      full.push_back(sizes[c]);
    if (full != term.t.shape())
      term.t = broadcastTo(term.t, full);
  }
  // Each operand's names that appear nowhere else summed; then the operands
  // contracted left to right, keeping the names later ones or the output use.
  for (size_t k = 0; k < terms.size(); ++k) {
    std::string others = output;
    for (size_t j = 0; j < terms.size(); ++j)
      if (j != k)
        others += terms[j].names;
    std::vector<int64_t> alone;
    std::string kept;
    for (size_t i = 0; i < terms[k].names.size(); ++i)
      (others.find(terms[k].names[i]) == std::string::npos
           ? (void)alone.push_back(static_cast<int64_t>(i))
           : (void)(kept += terms[k].names[i]));
    Reduction how; // in the operand's dtype, as NumPy's einsum sums
    how.dtype = terms[k].t.dtype();
    if (!alone.empty())
      terms[k] = {reduce("sum", terms[k].t, Axes(alone), false, how), kept};
  }
  EinsumTerm result = terms[0];
  for (size_t k = 1; k < terms.size(); ++k) {
    std::string later = output;
    for (size_t j = k + 1; j < terms.size(); ++j)
      later += terms[j].names;
    std::string keep;
    for (char c : result.names + terms[k].names)
      if (later.find(c) != std::string::npos && keep.find(c) == std::string::npos)
        keep += c;
    result = contracted(result, terms[k], keep);
  }
  return transpose(result.t, einsumOrder(result.names, output));
}

} // namespace tinymlir
