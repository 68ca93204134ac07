// Quoted command output in the README and docs/*.md, checked against the binary. A block is
// quoted output when the line before its opening fence is `<!-- orrery-output -->`; its first
// line is the command (`$ build/orrery ARGS`, continued with a trailing backslash), the rest is
// what the command prints on stdout, run from the repository root. A line holding only `...`
// stands for any number of lines (none included); every other line must match exactly (trailing
// spaces aside). Timings are never quoted this way: they carry their host and date instead.
//
// `ORRERY_UPDATE_QUOTED_OUTPUTS=1` rewrites every block from the binary instead of comparing
// (scripts/update-references.sh, `make update-references`): each run of shown lines keeps its
// length and is re-anchored where the output has a line with the same label (the text before its
// first digit), so the `...` elisions stay where they were.
#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

namespace orrery::e2e {
namespace {

namespace fs = std::filesystem;

constexpr const char* kMarker = "<!-- orrery-output -->";
constexpr const char* kPrompt = "$ build/orrery";

struct Block {
  std::string file;
  size_t command_line = 0;  // 1-based line of `$ build/orrery`
  size_t first = 0;         // 0-based index of the first expected line in the file
  size_t end = 0;           // 0-based index of the closing fence
  std::string indent;       // the fence's indentation, stripped from every line
  std::string command;      // what follows `build/orrery`, continuation lines included
  std::vector<std::string> expected;
};

std::string rstrip(std::string s) {
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t' || s.back() == '\r'))
    s.pop_back();
  return s;
}

std::string trim(const std::string& s) {
  const size_t b = s.find_first_not_of(" \t");
  return b == std::string::npos ? std::string() : rstrip(s.substr(b));
}

bool is_ellipsis(const std::string& line) {
  return trim(line) == "...";
}

std::vector<std::string> read_lines(const fs::path& path) {
  std::ifstream in(path);
  std::vector<std::string> lines;
  for (std::string line; std::getline(in, line);)
    lines.push_back(line);
  return lines;
}

std::vector<std::string> split_lines(const std::string& text) {
  std::vector<std::string> lines;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);)
    lines.push_back(line);
  return lines;
}

std::string unindent(const std::string& line, const std::string& indent) {
  return line.compare(0, indent.size(), indent) == 0 ? line.substr(indent.size()) : line;
}

// The marked blocks of one markdown file; a malformed one is a test failure.
std::vector<Block> find_blocks(const fs::path& path, const std::string& name) {
  const std::vector<std::string> lines = read_lines(path);
  std::vector<Block> blocks;
  for (size_t i = 0; i < lines.size(); ++i) {
    if (trim(lines[i]) != kMarker) continue;
    const std::string where = name + ":" + std::to_string(i + 1);
    if (i + 2 >= lines.size() || trim(lines[i + 1]) != "```") {
      ADD_FAILURE() << where << ": the marker must stand right before a ``` fence";
      continue;
    }
    Block b;
    b.file = name;
    b.indent = lines[i + 1].substr(0, lines[i + 1].find('`'));
    size_t k = i + 2;
    std::string first = unindent(lines[k], b.indent);
    if (first.compare(0, std::string(kPrompt).size(), kPrompt) != 0) {
      ADD_FAILURE() << where << ": the block's first line must start with '" << kPrompt << "'";
      continue;
    }
    b.command_line = k + 1;
    b.command = first.substr(std::string(kPrompt).size());
    while (!b.command.empty() && b.command.back() == '\\' && k + 1 < lines.size())
      b.command += "\n" + unindent(lines[++k], b.indent);
    b.first = ++k;
    while (k < lines.size() && trim(lines[k]) != "```")
      b.expected.push_back(rstrip(unindent(lines[k++], b.indent)));
    if (k == lines.size()) {
      ADD_FAILURE() << where << ": the block has no closing fence";
      continue;
    }
    b.end = k;
    blocks.push_back(b);
    i = k;
  }
  return blocks;
}

struct CommandRun {
  std::string out;
  int status = -1;
};

// Runs the command as the shell would from the repository root (the block's quoting and line
// continuations are the shell's), with build/orrery replaced by the binary under test.
CommandRun run_from_root(const std::string& command) {
  const std::string line = "cd '" + std::string(ORRERY_SOURCE_DIR) + "' && '" + ORRERY_BINARY +
                           "'" + command + " 2>/dev/null";
  FILE* pipe = ::popen(line.c_str(), "r");
  CommandRun run;
  std::array<char, 4096> buffer{};
  size_t n = 0;
  while ((n = std::fread(buffer.data(), 1, buffer.size(), pipe)) > 0)
    run.out.append(buffer.data(), n);
  run.status = ::pclose(pipe);
  return run;
}

// Where the shown lines depart from the output, or nothing when they match: `...` matches any
// run of lines (the shortest that lets the next shown line match).
std::optional<std::string> mismatch(const std::vector<std::string>& want,
                                    const std::vector<std::string>& got_raw) {
  std::vector<std::string> got;
  for (const std::string& l : got_raw)
    got.push_back(rstrip(l));
  size_t j = 0;
  for (size_t i = 0; i < want.size(); ++i) {
    if (is_ellipsis(want[i])) {
      if (i + 1 == want.size()) return std::nullopt;
      while (j < got.size() && got[j] != want[i + 1])
        ++j;
      if (j == got.size())
        return "shown line " + std::to_string(i + 2) + " not in the output: '" + want[i + 1] + "'";
      continue;
    }
    if (j >= got.size())
      return "the output ends before shown line " + std::to_string(i + 1) + ": '" + want[i] + "'";
    if (got[j] != want[i])
      return "shown line " + std::to_string(i + 1) + "\n  quoted: '" + want[i] + "'\n  binary: '" +
             got[j] + "'";
    ++j;
  }
  if (j < got.size())
    return "the output goes on after the last shown line ('" + got[j] +
           "'); end the block with '...' to show only its start";
  return std::nullopt;
}

// A line's label: its text before the first digit, trailing spaces aside.
std::string label(const std::string& line) {
  const size_t d = line.find_first_of("0123456789");
  return rstrip(d == std::string::npos ? line : line.substr(0, d));
}

// The block rewritten from the output: the same runs of shown lines between the `...`, each run
// re-anchored at the first output line (after the previous run) with its first line's label.
std::optional<std::vector<std::string>> regenerate(const std::vector<std::string>& want,
                                                   const std::vector<std::string>& got_raw) {
  std::vector<std::string> got;
  for (const std::string& l : got_raw)
    got.push_back(rstrip(l));
  std::vector<std::string> out;
  size_t j = 0;
  for (size_t i = 0; i < want.size();) {
    if (is_ellipsis(want[i])) {
      out.push_back(want[i++]);
      continue;
    }
    size_t run = 0;
    while (i + run < want.size() && !is_ellipsis(want[i + run]))
      ++run;
    if (i > 0) {  // after a `...`: find the run's anchor
      const std::string anchor = label(want[i]);
      while (j < got.size() && label(got[j]) != anchor)
        ++j;
    }
    const size_t shown = run;
    if (j >= got.size()) return std::nullopt;
    if (i + run == want.size()) run = got.size() - j;  // no `...` after it: the rest
    if (j + run > got.size()) return std::nullopt;
    out.insert(out.end(), got.begin() + static_cast<std::ptrdiff_t>(j),
               got.begin() + static_cast<std::ptrdiff_t>(j + run));
    j += run;
    i += shown;
  }
  return out;
}

std::vector<fs::path> markdown_files() {
  const fs::path root = ORRERY_SOURCE_DIR;
  std::vector<fs::path> files = {root / "README.md"};
  for (const auto& entry : fs::recursive_directory_iterator(root / "docs"))
    if (entry.path().extension() == ".md") files.push_back(entry.path());
  std::sort(files.begin(), files.end());
  return files;
}

TEST(QuotedOutputs, EveryMarkedBlockMatchesTheBinary) {
  const bool update = std::getenv("ORRERY_UPDATE_QUOTED_OUTPUTS") != nullptr;
  size_t blocks = 0;
  for (const fs::path& path : markdown_files()) {
    const std::string name = fs::relative(path, ORRERY_SOURCE_DIR).string();
    std::vector<std::string> lines = read_lines(path);
    const std::vector<Block> found = find_blocks(path, name);
    // Rewritten from the last block up, so earlier blocks' line numbers hold.
    bool changed = false;
    for (auto b = found.rbegin(); b != found.rend(); ++b) {
      ++blocks;
      const std::string where = name + ":" + std::to_string(b->command_line);
      const CommandRun run = run_from_root(b->command);
      ASSERT_EQ(run.status, 0) << where << ": the quoted command failed";
      const std::vector<std::string> got = split_lines(run.out);
      if (!update) {
        const std::optional<std::string> diff = mismatch(b->expected, got);
        EXPECT_FALSE(diff) << where << ": the quoted output disagrees with the binary, " << *diff
                           << "\n(make update-references rewrites it; read the diff)";
        continue;
      }
      const auto fresh = regenerate(b->expected, got);
      ASSERT_TRUE(fresh) << where << ": cannot place the shown lines in the output; edit by hand";
      std::vector<std::string> indented;
      for (const std::string& l : *fresh)
        indented.push_back(l.empty() ? l : b->indent + l);
      if (indented !=
          std::vector<std::string>(lines.begin() + static_cast<std::ptrdiff_t>(b->first),
                                   lines.begin() + static_cast<std::ptrdiff_t>(b->end))) {
        lines.erase(lines.begin() + static_cast<std::ptrdiff_t>(b->first),
                    lines.begin() + static_cast<std::ptrdiff_t>(b->end));
        lines.insert(lines.begin() + static_cast<std::ptrdiff_t>(b->first), indented.begin(),
                     indented.end());
        changed = true;
      }
    }
    if (changed) {
      std::ofstream out(path);
      for (const std::string& l : lines)
        out << l << "\n";
      std::printf("updated %s\n", name.c_str());
    }
  }
  // The README's demo and the key figures of docs/network.md, models.md and validation.md at
  // least: a marker lost in an edit is noticed here.
  EXPECT_GE(blocks, 6u);
}

const std::vector<std::string> kShown = {
    "Orrery event simulation, 1f1b pipeline schedule",
    "  ...",
    "  iteration time                 16.51 s",
    "    compute                      7.310 s   44.28 %",
    "  ...",
};

TEST(QuotedOutputs, EllipsisSkipsLinesAndAStaleFigureIsCaught) {
  const std::vector<std::string> out = {
      "Orrery event simulation, 1f1b pipeline schedule",
      "  workload   w",
      "",
      "  iteration time                 16.51 s",
      "    compute                      7.310 s   44.28 %",
      "    pipeline bubble              8.240 s   49.92 %",
  };
  EXPECT_FALSE(mismatch(kShown, out));
  std::vector<std::string> stale = out;
  stale[3] = "  iteration time                 16.52 s";
  ASSERT_TRUE(mismatch(kShown, stale));
  EXPECT_NE(mismatch(kShown, stale)->find("16.51 s"), std::string::npos);
  // Without a trailing `...`, more output is a mismatch; a missing line is one too.
  std::vector<std::string> whole(kShown.begin(), kShown.end() - 1);
  EXPECT_TRUE(mismatch(whole, out));
  EXPECT_TRUE(mismatch(kShown, {out[0], out[1]}));
}

TEST(QuotedOutputs, RegenerationKeepsTheElisions) {
  const std::vector<std::string> out = {
      "Orrery event simulation, 1f1b pipeline schedule",
      "  workload   w",
      "  iteration time                 17.02 s",
      "    compute                      7.500 s   44.07 %",
      "    pipeline bubble              8.240 s   48.41 %",
  };
  const auto fresh = regenerate(kShown, out);
  ASSERT_TRUE(fresh);
  EXPECT_EQ(*fresh, (std::vector<std::string>{kShown[0], kShown[1], out[2], out[3], kShown[4]}));
  EXPECT_FALSE(mismatch(*fresh, out));
  // A label that is no longer printed cannot be re-anchored: left to a person.
  EXPECT_FALSE(regenerate(kShown, {out[0], out[1]}));
}

TEST(QuotedOutputs, MarkedBlocksAreParsed) {
  const fs::path path = fs::temp_directory_path() / "orrery_quoted_output_test.md";
  {
    std::ofstream md(path);
    md << "text\n"
          "  <!-- orrery-output -->\n"
          "  ```\n"
          "  $ build/orrery simulate a.txt \\\n"
          "      --cluster dgx-a100\n"
          "  line one\n"
          "\n"
          "  ...\n"
          "  ```\n"
          "```\n"
          "$ build/orrery not marked\n"
          "```\n";
  }
  const std::vector<Block> blocks = find_blocks(path, "t.md");
  fs::remove(path);
  ASSERT_EQ(blocks.size(), 1u);
  EXPECT_EQ(blocks[0].command, " simulate a.txt \\\n    --cluster dgx-a100");
  EXPECT_EQ(blocks[0].command_line, 4u);
  EXPECT_EQ(blocks[0].expected, (std::vector<std::string>{"line one", "", "..."}));
  EXPECT_EQ(blocks[0].indent, "  ");
}

}  // namespace
}  // namespace orrery::e2e
