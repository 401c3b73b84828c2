#pragma once
/// "did you mean ...": the closest known word to a misspelt one.
#include <string>
#include <vector>

namespace plumb::schemas {

/// Levenshtein distance (insert, delete, substitute; ASCII case-insensitive).
size_t EditDistance(const std::string& a, const std::string& b);

/// The candidate closest to `word`, if it is close enough to be a likely typo (distance at most
/// max(2, |word|/3)); "" otherwise. Ties go to the earlier candidate.
std::string DidYouMean(const std::string& word, const std::vector<std::string>& candidates);

/// "did you mean 'x'?" or, with no close candidate, "expected one of: a, b, c" (or "" if none).
std::string SuggestHint(const std::string& word, const std::vector<std::string>& candidates);

/// `s` made safe to print inside quotes: control and non-ASCII bytes as \n, \t, \xNN or U+XXXX,
/// cut to `max` characters with "..." so a hostile value cannot forge output lines.
std::string Printable(const std::string& s, size_t max = 64);

}  // namespace plumb::schemas
