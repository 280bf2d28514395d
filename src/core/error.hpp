// Typed errors shared by every layer. main() holds the only catch; it prints what() with the rank and role.
#pragma once

#include <stdexcept>
#include <string>

namespace fedavg::core {

// Base of every error the program throws on purpose.
class Error : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// Bad user input that every rank sees identically (command line, cfg.json, vocab.txt, test.txt, rank count).
// Rank 0 reports it once; the other ranks stay quiet and let rank 0 end the job.
class InputError : public Error {
 public:
  using Error::Error;
};

// Bad input that one rank alone finds: a corpus file it reads (missing, not a regular file, empty, binary, no
// vocabulary word, changed while the job reads it). That rank reports it at once; the job ends with the bad-input
// status, as for InputError.
class CorpusError : public InputError {
 public:
  using InputError::InputError;
};

}  // namespace fedavg::core
