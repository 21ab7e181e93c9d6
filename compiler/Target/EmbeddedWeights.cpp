//===- EmbeddedWeights.cpp - Write weights into an object's section -------===//
//
// An ELF relocatable object locates each section by the file offset and
// size in its section header, in any order. So the empty weights section
// becomes one that starts at the first 64-byte boundary after the object
// LLVM wrote, whose bytes follow it: patching two fields of one header is
// the whole edit, and relocations against the section stay valid.
//
//===----------------------------------------------------------------------===//
#include "compiler/Target/EmbeddedWeights.h"
#include "compiler/Transforms/ConstantData.h"
#include "compiler/Transforms/EmbeddedWeights.h"
#include "compiler/Transforms/MappedWeights.h"

#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "llvm/Object/ELF.h"
#include "llvm/Support/MathExtras.h"
#include "llvm/Support/raw_ostream.h"

#include <string>

using namespace mlir;

FailureOr<mlir::tfm::EmbeddedWeights>
mlir::tfm::takeEmbeddedWeights(ModuleOp module) {
  EmbeddedWeights weights;
  auto symbol = module.lookupSymbol<LLVM::GlobalOp>(kEmbeddedWeightsSymbol);
  if (!symbol)
    return weights;
  auto record = symbol->getAttrOfType<DictionaryAttr>(kEmbeddedWeightsAttr);
  if (!record)
    return symbol.emitError("the embedded weights' declaration has no '")
           << kEmbeddedWeightsAttr << "' record";
  symbol->removeAttr(kEmbeddedWeightsAttr);
  auto size = record.getAs<IntegerAttr>("size");
  auto tensors = record.getAs<ArrayAttr>("tensors");
  if (!size || !tensors)
    return symbol.emitError("malformed embedded weights record");
  weights.size = size.getInt();
  for (Attribute entry : tensors) {
    auto tensor = dyn_cast<DictionaryAttr>(entry);
    auto offset = tensor ? tensor.getAs<IntegerAttr>("offset") : nullptr;
    std::optional<ArrayRef<char>> bytes =
        tensor ? getRawConstantData(tensor.get("data")) : std::nullopt;
    if (!offset || !bytes || offset.getInt() < 0 ||
        offset.getInt() + int64_t(bytes->size()) > weights.size)
      return symbol.emitError("malformed embedded weights record: ") << entry;
    weights.tensors.push_back({offset.getInt(), *bytes});
  }
  llvm::sort(weights.tensors, [](const EmbeddedWeights::Tensor &a,
                                 const EmbeddedWeights::Tensor &b) {
    return a.offset < b.offset;
  });
  for (size_t i = 1; i < weights.tensors.size(); ++i)
    if (weights.tensors[i - 1].offset +
            int64_t(weights.tensors[i - 1].bytes.size()) >
        weights.tensors[i].offset)
      return symbol.emitError("embedded weights overlap at offset ")
             << weights.tensors[i].offset;
  return weights;
}

llvm::Error mlir::tfm::writeObjectWithWeights(StringRef object,
                                              const EmbeddedWeights &weights,
                                              llvm::raw_ostream &os) {
  using ELFT = llvm::object::ELF64LE;
  llvm::Expected<llvm::object::ELFFile<ELFT>> file =
      llvm::object::ELFFile<ELFT>::create(object);
  if (!file)
    return file.takeError();
  if (file->getHeader().e_type != llvm::ELF::ET_REL)
    return llvm::createStringError("not a relocatable object");
  llvm::Expected<ArrayRef<ELFT::Shdr>> sections = file->sections();
  if (!sections)
    return sections.takeError();
  const ELFT::Shdr *found = nullptr;
  for (const ELFT::Shdr &section : *sections) {
    llvm::Expected<StringRef> name = file->getSectionName(section);
    if (!name)
      return name.takeError();
    if (*name == kEmbeddedWeightsSection)
      found = &section;
  }
  if (!found || found->sh_type != llvm::ELF::SHT_PROGBITS ||
      found->sh_size != 0 || found->sh_addralign > kEmbeddedWeightsAlignment)
    return llvm::createStringError("the object has no empty section " +
                                   kEmbeddedWeightsSection +
                                   " for its weights");

  // The header to patch, at its place in a copy of the object (which holds
  // code and metadata only: small).
  std::string patched = object.str();
  uint64_t headerOffset = reinterpret_cast<const char *>(found) - object.data();
  auto *header = reinterpret_cast<ELFT::Shdr *>(patched.data() + headerOffset);
  uint64_t start = llvm::alignTo(object.size(), kEmbeddedWeightsAlignment);
  header->sh_offset = start;
  header->sh_size = weights.size;
  header->sh_addralign = kEmbeddedWeightsAlignment;
  os << patched;

  uint64_t position = object.size();
  auto padTo = [&](uint64_t offset) {
    os.write_zeros(offset - position);
    position = offset;
  };
  for (const EmbeddedWeights::Tensor &tensor : weights.tensors) {
    padTo(start + tensor.offset);
    os.write(tensor.bytes.data(), tensor.bytes.size());
    position += tensor.bytes.size();
    // Bytes read from the mapped checkpoint need not stay resident.
    releaseMappedWeightPages(tensor.bytes);
  }
  padTo(start + weights.size);
  return llvm::Error::success();
}
