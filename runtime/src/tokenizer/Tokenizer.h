//===- Tokenizer.h - The tokenizer pipeline ---------------------*- C++ -*-===//
//
// The pipeline of the `tokenizers` package, in its order: added tokens are
// split out of the raw text, each remaining piece is normalized (and split
// again at the added tokens whose normalized form it holds), pre-tokenized
// into words, and each word becomes ids through the model (BPE, WordPiece,
// WordLevel); the post-processor truncates, adds special tokens and type
// ids, and padding follows. Decoding maps ids to tokens and runs the
// decoder chain.
//
// Text is carried as a sequence of code points, each with the byte range of
// the input it came from, so that offsets survive every normalization.
//
//===----------------------------------------------------------------------===//

#ifndef TFM_RUNTIME_TOKENIZER_TOKENIZER_H
#define TFM_RUNTIME_TOKENIZER_TOKENIZER_H

#include <cstdint>
#include <memory>
#include <stdexcept>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

namespace tfm::rt::tok {

/// A code point of the normalized text and the input bytes [begin, end) it
/// stands for.
struct NChar {
  uint32_t cp;
  uint32_t begin, end;
};
using NString = std::vector<NChar>;

std::string toUtf8(const NString &s);
std::string toUtf8(const NString &s, size_t begin, size_t end);
/// A token quoted in a message: control characters escaped, cut short.
std::string printableToken(std::string_view token);

/// An error in a tokenizer file or a bad argument; the C API turns it into
/// a status.
struct TokenizerError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

struct Normalizer {
  virtual ~Normalizer() = default;
  virtual void normalize(NString &s) const = 0;
};

struct PreTokenizer {
  virtual ~PreTokenizer() = default;
  /// Splits (and may transform) every word of `words`.
  virtual void preTokenize(std::vector<NString> &words) const = 0;
};

/// A model's token: its id and the chars [first, last) of the word.
struct ModelToken {
  int32_t id;
  uint32_t first, last;
};

struct Model {
  virtual ~Model() = default;
  virtual void tokenize(const NString &word,
                        std::vector<ModelToken> &out) const = 0;
  /// The model's own vocabulary, token by id (empty strings for holes).
  std::vector<std::string> vocab;
};

/// An encoded sequence before and after post-processing.
struct Encoding {
  std::vector<int64_t> ids, typeIds, specialMask, attention;
  std::vector<int64_t> begins, ends;
  std::vector<int32_t> sequenceIds;
  size_t size() const { return ids.size(); }
  void push(int64_t id, int64_t typeId, bool special, int64_t begin,
            int64_t end, int32_t sequence) {
    ids.push_back(id);
    typeIds.push_back(typeId);
    specialMask.push_back(special);
    attention.push_back(1);
    begins.push_back(begin);
    ends.push_back(end);
    sequenceIds.push_back(sequence);
  }
  void append(const Encoding &other);
  /// Keeps `length` tokens, from the end when `left`.
  void truncate(size_t length, bool left);
};

class Tokenizer;

struct PostProcessor {
  virtual ~PostProcessor() = default;
  /// How many tokens process() adds.
  virtual size_t addedTokens(bool pair) const = 0;
  /// Turns the encodings of the text (and the pair) into the pieces whose
  /// concatenation is the result, as the package's process_encodings.
  virtual void process(const Tokenizer &tokenizer,
                       std::vector<Encoding> &encodings,
                       bool addSpecial) const = 0;
};

struct Decoder {
  virtual ~Decoder() = default;
  virtual void decodeChain(std::vector<std::string> &tokens) const = 0;
};

struct AddedToken {
  std::string content;
  int32_t id = 0;
  bool special = false, singleWord = false, lstrip = false, rstrip = false,
       normalized = false;
  /// What is matched: the content, normalized when `normalized`.
  std::vector<uint32_t> pattern;
};

struct TruncationConfig {
  size_t maxLength = 0;
  int strategy = 0; // tfm_truncation_strategy
  bool left = false;
};

struct PaddingConfig {
  bool enabled = false;
  size_t fixedLength = 0; // 0: the batch's longest
  size_t multipleOf = 0;
  bool left = false;
  int64_t padId = 0, padTypeId = 0;
  std::string padToken = "[PAD]";
};

class Tokenizer {
public:
  std::unique_ptr<Normalizer> normalizer;
  std::unique_ptr<PreTokenizer> preTokenizer;
  std::unique_ptr<Model> model;
  std::unique_ptr<PostProcessor> postProcessor;
  std::unique_ptr<Decoder> decoder;
  std::vector<AddedToken> added;
  TruncationConfig truncation;
  PaddingConfig padding;
  /// Ids by role ("bos", "eos", ...).
  std::unordered_map<std::string, int64_t> roles;

  /// Builds the id <-> token maps and the added tokens' matchers; call once
  /// the parts are set.
  void finish();

  size_t vocabSize() const { return idToToken.size(); }
  const std::string *token(int64_t id) const;
  int64_t id(std::string_view token) const;
  bool isSpecial(int64_t id) const;

  /// The tokens of one sequence (no special tokens), type id `typeId`.
  void encodeSequence(std::string_view text, int64_t typeId, int32_t sequence,
                      Encoding &out) const;
  /// Truncation, post-processing and padding to at least `padTo` (0: none)
  /// and a multiple of `multipleOf`.
  struct Options {
    bool addSpecial = true;
    size_t maxLength = 0;
    int strategy = 0;
    bool truncateLeft = false;
    size_t padTo = 0, multipleOf = 0;
    bool padLeft = false;
  };
  void encode(std::string_view text, const std::string_view *pair,
              const Options &options, Encoding &out) const;
  void pad(Encoding &e, size_t length, bool left) const;
  std::string decode(const int64_t *ids, size_t count, bool skipSpecial) const;

private:
  void splitAdded(const NString &s, bool normalizedSet,
                  std::vector<std::pair<NString, int32_t>> &out) const;

  std::vector<std::string> idToToken;
  std::vector<bool> present, special;
  /// What decoding reads for a normalized added token: its normalized form,
  /// as the package's normalized_cache (empty: the token itself).
  std::unordered_map<int64_t, std::string> decodeForm;
  std::unordered_map<std::string, int64_t> tokenToId;
  /// Indices into `added` by the first code point of their pattern, longest
  /// pattern first; one map for raw and one for normalized matching.
  std::unordered_map<uint32_t, std::vector<size_t>> rawByFirst, normByFirst;
};

/// Ids above this are refused: no vocabulary comes near it, and a fuzzed
/// id of 2^31 must not allocate gigabytes.
constexpr int64_t kMaxTokenId = (int64_t(1) << 24) - 1;

// Component factories (Normalizers.cpp, PreTokenizers.cpp, Models.cpp,
// PostProcessors.cpp, Decoders.cpp).
std::unique_ptr<Normalizer> makeBertNormalizer(bool cleanText, bool chinese,
                                               bool stripAccents,
                                               bool lowercase);
std::unique_ptr<Normalizer> makeNfd();
std::unique_ptr<Normalizer> makeNfc();
std::unique_ptr<Normalizer> makeLowercase();
std::unique_ptr<Normalizer> makeStripAccents();
std::unique_ptr<Normalizer> makeStrip(bool left, bool right);
std::unique_ptr<Normalizer> makeReplace(const std::string &pattern,
                                        const std::string &content);
std::unique_ptr<Normalizer> makePrepend(const std::string &prepend);
std::unique_ptr<Normalizer>
makeNormalizerSequence(std::vector<std::unique_ptr<Normalizer>> parts);

enum class SplitBehavior {
  Removed,
  Isolated,
  MergedWithPrevious,
  MergedWithNext,
  Contiguous
};
/// The regular expressions this runtime knows (docs/tokenizers.md).
enum class KnownRegex { Gpt2, Llama3, Qwen2 };
/// The pattern of a Split regex, or false for one it does not implement.
bool knownRegex(const std::string &pattern, KnownRegex &out);

std::unique_ptr<PreTokenizer> makeBertPreTokenizer();
std::unique_ptr<PreTokenizer> makeWhitespaceSplit();
std::unique_ptr<PreTokenizer> makeByteLevelPreTokenizer(bool addPrefixSpace,
                                                        bool useRegex);
std::unique_ptr<PreTokenizer>
makeRegexSplit(KnownRegex regex, SplitBehavior behavior, bool invert);
std::unique_ptr<PreTokenizer> makeStringSplit(const std::string &pattern,
                                              SplitBehavior behavior,
                                              bool invert);
std::unique_ptr<PreTokenizer> makePunctuation(SplitBehavior behavior);
std::unique_ptr<PreTokenizer> makeDigits(bool individual);
enum class PrependScheme { Always, First, Never };
std::unique_ptr<PreTokenizer> makeMetaspace(uint32_t replacement,
                                            PrependScheme scheme, bool split);
std::unique_ptr<PreTokenizer>
makePreTokenizerSequence(std::vector<std::unique_ptr<PreTokenizer>> parts);

struct BpeConfig {
  std::unordered_map<std::string, int32_t> vocab;
  /// Pairs of tokens in rank order; equal `ranks` entries tie (broken by
  /// position, as SentencePiece does); empty `ranks`: rank = index.
  std::vector<std::pair<std::string, std::string>> merges;
  std::vector<uint32_t> ranks;
  std::string unk, prefix, suffix;
  bool hasUnk = false, fuseUnk = false, byteFallback = false,
       ignoreMerges = false;
};
std::unique_ptr<Model> makeBpe(BpeConfig config);
std::unique_ptr<Model>
makeWordPiece(std::unordered_map<std::string, int32_t> vocab,
              const std::string &unk, const std::string &prefix,
              size_t maxChars);
std::unique_ptr<Model>
makeWordLevel(std::unordered_map<std::string, int32_t> vocab,
              const std::string &unk);

/// One piece of a TemplateProcessing: a sequence (A = 0, B = 1) or a
/// special token by name, and its type id.
struct TemplatePiece {
  bool isSequence;
  int sequence;
  std::string special;
  int64_t typeId;
};
std::unique_ptr<PostProcessor> makeTemplate(
    std::vector<TemplatePiece> single, std::vector<TemplatePiece> pair,
    std::unordered_map<std::string, std::vector<int64_t>> specialTokens);
std::unique_ptr<PostProcessor> makeBertProcessing(int64_t cls, int64_t sep);
std::unique_ptr<PostProcessor> makeByteLevelProcessing(bool trimOffsets,
                                                       bool addPrefixSpace);
std::unique_ptr<PostProcessor>
makeProcessorSequence(std::vector<std::unique_ptr<PostProcessor>> parts);

std::unique_ptr<Decoder> makeByteLevelDecoder();
std::unique_ptr<Decoder> makeWordPieceDecoder(const std::string &prefix,
                                              bool cleanup);
std::unique_ptr<Decoder> makeMetaspaceDecoder(uint32_t replacement,
                                              PrependScheme scheme);
std::unique_ptr<Decoder> makeReplaceDecoder(const std::string &pattern,
                                            const std::string &content);
std::unique_ptr<Decoder> makeByteFallbackDecoder();
std::unique_ptr<Decoder> makeFuseDecoder();
std::unique_ptr<Decoder> makeStripDecoder(uint32_t content, size_t start,
                                          size_t stop);
std::unique_ptr<Decoder> makeBpeDecoder(const std::string &suffix);
std::unique_ptr<Decoder>
makeDecoderSequence(std::vector<std::unique_ptr<Decoder>> parts);

/// GPT-2's byte <-> code point map.
uint32_t byteToChar(uint8_t byte);
/// The byte of a byte-level char, or -1.
int charToByte(uint32_t cp);

// Loaders (Load.cpp). They throw TokenizerError with a one-line message.
std::unique_ptr<Tokenizer> loadTokenizerJson(std::string_view text,
                                             const std::string &name);
std::unique_ptr<Tokenizer> loadTokenizerGguf(const std::string &path);
/// The same from a GGUF file's `size` bytes at `data` (only its metadata is
/// read); `name` stands for the file in errors.
std::unique_ptr<Tokenizer>
loadTokenizerGgufMemory(const void *data, size_t size, const std::string &name);
/// Sets the roles (bos, eos, ...) that a tokenizer_config.json names.
void applyTokenizerConfig(Tokenizer &t, std::string_view text,
                          const std::string &name);

} // namespace tfm::rt::tok

#endif // TFM_RUNTIME_TOKENIZER_TOKENIZER_H
