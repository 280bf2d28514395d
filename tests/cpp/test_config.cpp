#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "core/command_line.hpp"
#include "core/config.hpp"
#include "core/error.hpp"
#include "core/settings.hpp"

using fedavg::core::InputError;
using fedavg::core::parse_settings;
using fedavg::core::StrategyKind;
using fedavg::core::WaitProfile;

namespace {

std::string error_of(const std::string& text) {
  try {
    parse_settings(text, "cfg.json");
  } catch (const InputError& e) {
    return e.what();
  }
  return "";
}

}  // namespace

TEST(Config, ReportKeysAndDefaults) {
  const auto s = parse_settings(R"({"data_name": "Moby", "bpe": 10, "bs": 32, "target": 5.5})", "cfg.json");
  EXPECT_EQ(s.data_name, "Moby");
  EXPECT_EQ(s.bpe, 10);
  EXPECT_EQ(s.bs, 32);
  EXPECT_DOUBLE_EQ(s.target, 5.5);
  EXPECT_EQ(s.window, 2);
  EXPECT_EQ(s.dim, 100);
  EXPECT_EQ(s.window_width(), 5);
  EXPECT_FALSE(s.cross_lines);
}

TEST(Config, OptionalKeys) {
  const auto s = parse_settings(R"({"data_name": "x", "bpe": 1, "bs": 2, "target": 1,
    "window": 3, "dim": 16, "lr": 0.5, "seed": 9, "max_rounds": 7, "max_seconds": 2.5,
    "cross_lines": true, "liveness_seconds": 3, "model_args": {"a": 1}})",
                                "cfg.json");
  EXPECT_EQ(s.window, 3);
  EXPECT_EQ(s.dim, 16);
  EXPECT_DOUBLE_EQ(s.lr, 0.5);
  EXPECT_EQ(s.seed, 9u);
  EXPECT_EQ(s.max_rounds, 7);
  EXPECT_DOUBLE_EQ(s.max_seconds, 2.5);
  EXPECT_TRUE(s.cross_lines);
  EXPECT_EQ(s.model_args["a"], 1);
  EXPECT_EQ(s.to_json()["window"], 3);
}

TEST(Config, StrategyKeys) {
  const auto s = parse_settings(R"({"data_name": "x", "bpe": 1, "bs": 2, "target": 1, "strategy": "easgd",
    "elastic_alpha": 0.25, "slow_learners": 1, "slow_factor": 4})",
                                "cfg.json");
  EXPECT_EQ(s.strategy, StrategyKind::Easgd);
  EXPECT_DOUBLE_EQ(s.elastic_alpha, 0.25);
  EXPECT_EQ(s.slow_learners, 1);
  EXPECT_DOUBLE_EQ(s.slow_factor, 4.0);
  const auto d = parse_settings(R"({"data_name": "x", "bpe": 1, "bs": 2, "target": 1})", "cfg.json");
  EXPECT_EQ(d.strategy, StrategyKind::FedAvg);
  EXPECT_DOUBLE_EQ(d.elastic_alpha, 0.0);  // 0.9 / learners
  EXPECT_EQ(d.slow_learners, 0);
  EXPECT_DOUBLE_EQ(d.slow_factor, 1.0);
  // A slow factor below 1 would make a learner faster than it is; alpha above 1 overshoots the centre.
  EXPECT_NE(error_of(R"({"data_name": "x", "bpe": 1, "bs": 1, "target": 1, "slow_factor": 0.5})")
                .find("\"slow_factor\" must be between 1 and"),
            std::string::npos);
  EXPECT_NE(error_of(R"({"data_name": "x", "bpe": 1, "bs": 1, "target": 1, "elastic_alpha": 1.5})")
                .find("\"elastic_alpha\" must be between"),
            std::string::npos);
  EXPECT_NE(error_of(R"({"data_name": "x", "bpe": 1, "bs": 1, "target": 1, "strategy": "gossip"})")
                .find("must be one of fedavg, bsp, bmuf, diloco, easgd, hogwild"),
            std::string::npos);
  EXPECT_NE(
      error_of(R"({"data_name": "x", "bpe": 1, "bs": 1, "target": 1, "strategy": ""})").find("must be one of fedavg"),
      std::string::npos);
  EXPECT_STREQ(fedavg::core::strategy_name(StrategyKind::Hogwild), "hogwild");
}

TEST(Config, WaitProfile) {
  EXPECT_EQ(parse_settings(R"({"data_name": "x", "bpe": 1, "bs": 1, "target": 1})", "cfg.json").wait_profile,
            WaitProfile::Auto);
  EXPECT_EQ(parse_settings(R"({"data_name": "x", "bpe": 1, "bs": 1, "target": 1, "wait_profile": "plain"})", "cfg.json")
                .wait_profile,
            WaitProfile::Plain);
  EXPECT_NE(error_of(R"({"data_name": "x", "bpe": 1, "bs": 1, "target": 1, "wait_profile": "fast"})")
                .find("\"wait_profile\" must be one of auto, plain, oversubscribed, got \"fast\""),
            std::string::npos);
}

TEST(Config, ShuffleWindows) {
  EXPECT_EQ(parse_settings(R"({"data_name": "x", "bpe": 1, "bs": 1, "target": 1})", "cfg.json").shuffle_windows,
            1 << 18);
  EXPECT_EQ(parse_settings(R"({"data_name": "x", "bpe": 1, "bs": 1, "target": 1, "shuffle_windows": 0})", "cfg.json")
                .shuffle_windows,
            0);
  const auto e = error_of(R"({"data_name": "x", "bpe": 1, "bs": 1, "target": 1, "shuffle_windows": -1})");
  EXPECT_NE(e.find("\"shuffle_windows\" must be between 0 and"), std::string::npos) << e;
}

TEST(Config, BalanceRounds) {
  EXPECT_FALSE(parse_settings(R"({"data_name": "x", "bpe": 1, "bs": 1, "target": 1})", "cfg.json").balance_rounds);
  EXPECT_TRUE(
      parse_settings(R"({"data_name": "x", "bpe": 1, "bs": 1, "target": 1, "balance_rounds": true})", "cfg.json")
          .balance_rounds);
  const auto e = error_of(R"({"data_name": "x", "bpe": 1, "bs": 1, "target": 1, "balance_rounds": 1})");
  EXPECT_NE(e.find("balance_rounds"), std::string::npos) << e;
}

TEST(Config, AddPowerIsBetweenZeroAndOne) {
  const std::string base = R"({"data_name": "x", "bpe": 200, "bs": 1, "target": 1)";
  const auto plain = parse_settings(base + "}", "cfg.json");
  EXPECT_EQ(plain.combine, fedavg::core::Combine::Add);
  EXPECT_TRUE(plain.share_host);
  const auto e = error_of(base + R"(, "add_power": 2})");
  EXPECT_NE(e.find("\"add_power\" must be between 0 and 1"), std::string::npos) << e;
}

TEST(Config, MaxLossRatio) {
  EXPECT_DOUBLE_EQ(parse_settings(R"({"data_name": "x", "bpe": 1, "bs": 1, "target": 1})", "cfg.json").max_loss_ratio,
                   10.0);
  EXPECT_DOUBLE_EQ(parse_settings(R"({"data_name": "x", "bpe": 1, "bs": 1, "target": 1, "max_loss_ratio": 0})",
                                  "cfg.json")
                       .max_loss_ratio,
                   0.0);
  EXPECT_NE(error_of(R"({"data_name": "x", "bpe": 1, "bs": 1, "target": 1, "max_loss_ratio": -1})"), "");
}

TEST(Config, Device) {
  const std::string base = R"({"data_name": "x", "bpe": 1, "bs": 1, "target": 1)";
  EXPECT_EQ(parse_settings(base + "}", "cfg.json").device, "auto");
  for (const std::string d : {"auto", "cpu", "cuda", "cuda:1"})
    EXPECT_EQ(parse_settings(base + R"(, "device": ")" + d + "\"}", "cfg.json").device, d);
  for (const std::string bad : {R"("gpu")", R"("cuda:")", R"("cuda:x")", R"("CPU")", "0"}) {
    const auto e = error_of(base + ",\n\"device\": " + bad + "}");
    EXPECT_NE(e.find("cfg.json:2: \"device\" must be \"auto\", \"cpu\", \"cuda\" or \"cuda:N\", got " + bad),
              std::string::npos)
        << e;
  }
  // The dict handed to the model holds the settings as written (the run plan puts hogwild on the CPU).
  EXPECT_EQ(parse_settings(base + R"(, "device": "cuda"})", "cfg.json").to_json()["device"], "cuda");
  EXPECT_EQ(parse_settings(base + R"(, "device": "cuda", "strategy": "hogwild"})", "cfg.json").to_json()["device"],
            "cuda");
}

TEST(Config, MissingKeyIsNamed) {
  const auto e = error_of(R"({"data_name": "x", "bpe": 1, "target": 1})");
  EXPECT_NE(e.find("cfg.json:1: missing required key \"bs\""), std::string::npos) << e;
}

TEST(Config, UnknownKeyNamesItsLine) {
  const auto e = error_of(
      "{\n  \"data_name\": \"x\",\n  \"bpe\": 1,\n  \"bs\": 1,\n  \"target\": 1,\n  \"windw\": 3\n}");
  EXPECT_NE(e.find("cfg.json:6: unknown key \"windw\""), std::string::npos) << e;
}

TEST(Config, WrongTypeNamesItsLine) {
  const auto e = error_of("{\n  \"data_name\": \"x\",\n  \"bpe\": \"ten\",\n  \"bs\": 1,\n  \"target\": 1\n}");
  EXPECT_NE(e.find("cfg.json:3: \"bpe\" must be an integer"), std::string::npos) << e;
}

TEST(Config, OutOfRange) {
  const auto e = error_of(R"({"data_name": "x", "bpe": 0, "bs": 1, "target": 1})");
  EXPECT_NE(e.find("\"bpe\" must be between 1 and"), std::string::npos) << e;
  EXPECT_NE(error_of(R"({"data_name": "x", "bpe": 1, "bs": 1, "target": 1, "max_seconds": -1})"), "");
}

TEST(Config, InvalidJsonNamesItsLine) {
  const auto e = error_of("{\n  \"data_name\": \"x\",\n  \"bpe\": 1,,\n}");
  EXPECT_NE(e.find("cfg.json:3: not valid JSON"), std::string::npos) << e;
  EXPECT_NE(error_of("[1, 2]").find("must hold a JSON object"), std::string::npos);
}

TEST(Config, AKeyGivenTwiceNamesBothLines) {
  const auto e = error_of("{\n  \"data_name\": \"x\",\n  \"bpe\": 1,\n  \"bs\": 1,\n  \"target\": 1,\n  \"bpe\": 4\n}");
  EXPECT_NE(e.find("cfg.json:6: key \"bpe\" is given twice (first on line 3)"), std::string::npos) << e;
  const auto nested = error_of(R"({"data_name": "x", "bpe": 1, "bs": 1, "target": 1,
  "model_args": {"negatives": 3, "negatives": 4}})");
  EXPECT_NE(nested.find("key \"negatives\" is given twice"), std::string::npos) << nested;
  // The same key in two objects is fine.
  EXPECT_EQ(
      error_of(R"({"data_name": "x", "bpe": 1, "bs": 1, "target": 1, "model_args": {"bpe": 3}})").find("given twice"),
      std::string::npos);
}

TEST(Config, DataNameMustBeSafeForFileNames) {
  EXPECT_NE(error_of(R"({"data_name": "../x", "bpe": 1, "bs": 1, "target": 1})").find("data_name"), std::string::npos);
}

TEST(Config, CommandLine) {
  const char* argv[] = {"fedavg_mpi", "--config=/c", "--out", "/tmp/o", "a.txt", "b.txt", nullptr};
  const auto line = fedavg::core::parse_command_line(6, const_cast<char**>(argv));
  EXPECT_EQ(line.corpora.size(), 2u);
  EXPECT_EQ(line.out_dir, "/tmp/o");
  EXPECT_EQ(*line.config_dir, "/c");
  const fedavg::core::Config c(line);
  EXPECT_EQ(c.pipelines(), 2);
  EXPECT_EQ(c.config_dir, "/c");
  EXPECT_FALSE(c.prepared);

  const char* bad[] = {"fedavg_mpi", "--bogus", "a.txt", nullptr};
  EXPECT_THROW(fedavg::core::parse_command_line(3, const_cast<char**>(bad)), InputError);
  const char* none[] = {"fedavg_mpi", "--config=/c", nullptr};
  EXPECT_THROW(fedavg::core::parse_command_line(2, const_cast<char**>(none)), InputError);
  const char* both[] = {"fedavg_mpi", "--resume", "--overwrite", "a.txt", nullptr};
  EXPECT_THROW(fedavg::core::parse_command_line(4, const_cast<char**>(both)), InputError);
}

TEST(Config, WithoutConfigTheJobPreparesOutConfig) {
  const char* argv[] = {"fedavg_mpi", "--out", "/tmp/o", "--min-count", "2", "--stopwords", "a.txt", nullptr};
  const auto line = fedavg::core::parse_command_line(7, const_cast<char**>(argv));
  EXPECT_FALSE(line.config_dir.has_value());
  EXPECT_EQ(line.prepare.min_count, 2);
  EXPECT_TRUE(line.prepare.stopwords);
  const fedavg::core::Config c(line);
  EXPECT_TRUE(c.prepared);
  EXPECT_EQ(c.config_dir, std::filesystem::path("/tmp/o") / "config");
  // Preparation flags make no sense with a config of the user's.
  const char* mixed[] = {"fedavg_mpi", "--config", "/c", "--min-count", "2", "a.txt", nullptr};
  EXPECT_THROW(fedavg::core::parse_command_line(6, const_cast<char**>(mixed)), InputError);
}

TEST(Config, SettingsFromTheCommandLine) {
  const char* argv[] = {"fedavg_mpi", "--set", "dim=100",         "--lr",  "0.05", "--max-rounds=7", "--epoch",
                        "3",          "--set", "strategy=diloco", "a.txt", nullptr};
  const auto line = fedavg::core::parse_command_line(11, const_cast<char**>(argv));
  ASSERT_EQ(line.overrides.size(), 5u);
  EXPECT_EQ(line.overrides[1].key, "lr");
  EXPECT_EQ(line.overrides[1].flag, "--lr 0.05");
  EXPECT_EQ(line.overrides[3].key, "max_epochs");  // fastText's name
  const auto s = parse_settings(R"({"data_name": "x", "bpe": 1, "bs": 1, "target": 1, "dim": 32})", "cfg.json",
                                line.overrides);
  EXPECT_EQ(s.dim, 100);  // the command line wins over cfg.json
  EXPECT_DOUBLE_EQ(s.lr, 0.05);
  EXPECT_EQ(s.max_rounds, 7);
  EXPECT_DOUBLE_EQ(s.max_epochs, 3.0);
  EXPECT_EQ(s.strategy, StrategyKind::Diloco);
  EXPECT_FALSE(s.nesterov);  // as written: diloco is bmuf with Nesterov momentum whatever this says (the factory)
  nlohmann::json merged;
  parse_settings(R"({"data_name": "x", "bpe": 1, "bs": 1, "target": 1})", "cfg.json", line.overrides, &merged);
  EXPECT_EQ(merged["dim"], 100);
  EXPECT_EQ(merged["strategy"], "diloco");
}

TEST(Config, ABadOverrideNamesItsFlag) {
  const std::string base = R"({"data_name": "x", "bpe": 1, "bs": 1, "target": 1})";
  auto error = [&](const fedavg::core::Override& o) {
    try {
      parse_settings(base, "cfg.json", {o});
    } catch (const InputError& e) {
      return std::string(e.what());
    }
    return std::string();
  };
  EXPECT_EQ(error({"dim", "abc", "--dim abc"}), "command line: --dim abc: \"dim\" must be an integer, got \"abc\"");
  EXPECT_EQ(error({"dim", "0", "--set dim=0"}), "command line: --set dim=0: \"dim\" must be between 1 and 4096, got 0");
  EXPECT_NE(error({"dimm", "3", "--set dimm=3"}).find("command line: --set dimm=3: unknown key \"dimm\""),
            std::string::npos);
  const char* argv[] = {"fedavg_mpi", "--dimm", "3", "a.txt", nullptr};
  try {
    fedavg::core::parse_command_line(4, const_cast<char**>(argv));
    FAIL() << "expected an InputError";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("unknown option --dimm"), std::string::npos) << e.what();
  }
}

TEST(Config, GensimAndWord2vecNamesAreAliases) {
  const char* argv[] = {"fedavg_mpi", "--negative", "10", "--min_count",  "2",   "--vector-size", "50",   "--window",
                        "3",          "--sample",   "0",  "--vocab-size", "500", "a.txt",         nullptr};
  const auto line = fedavg::core::parse_command_line(14, const_cast<char**>(argv));
  EXPECT_EQ(line.prepare.min_count, 2);
  EXPECT_EQ(line.prepare.vocab_size, 500);
  nlohmann::json merged;
  const auto s = parse_settings(
      R"({"data_name": "x", "bpe": 1, "bs": 1, "target": 1, "model_args": {"noise_power": 0.5}})", "cfg.json",
      line.overrides, &merged);
  EXPECT_EQ(s.dim, 50);
  EXPECT_EQ(s.window, 3);
  EXPECT_DOUBLE_EQ(s.sample, 0.0);
  // --negative sets one key of model_args and keeps the config's others.
  EXPECT_EQ(merged["model_args"], nlohmann::json::parse(R"({"noise_power": 0.5, "negatives": 10})"));
}

TEST(Config, AMisspelledOptionSuggestsTheNearest) {
  auto error = [](std::vector<const char*> args) {
    args.insert(args.begin(), "fedavg_mpi");
    args.push_back("a.txt");
    args.push_back(nullptr);
    try {
      fedavg::core::parse_command_line(static_cast<int>(args.size()) - 1, const_cast<char**>(args.data()));
    } catch (const InputError& e) {
      return std::string(e.what());
    }
    return std::string();
  };
  EXPECT_NE(error({"--epoc", "3"}).find("unknown option --epoc: did you mean --epoch?"), std::string::npos);
  EXPECT_NE(error({"-epoch", "3"}).find("did you mean --epoch?"), std::string::npos);
  EXPECT_NE(error({"--max-round", "3"}).find("did you mean --max-rounds?"), std::string::npos);
  EXPECT_NE(error({"--overwirte"}).find("did you mean --overwrite?"), std::string::npos);
  EXPECT_EQ(error({"--xyzzy", "3"}).find("did you mean"), std::string::npos);
  // Other tools' flags that have no place here say what to do instead.
  EXPECT_NE(error({"--threads", "8"})
                .find("unknown option --threads: the work is spread over MPI ranks: set their "
                      "number with mpiexec -n"),
            std::string::npos);
  EXPECT_NE(error({"-workers", "8"}).find("mpiexec -n"), std::string::npos);
  EXPECT_NE(error({"--sg", "1"}).find("skip-gram is not supported"), std::string::npos);
  EXPECT_NE(error({"--hs=1"}).find("unknown option --hs: hierarchical softmax is not supported"), std::string::npos);
  EXPECT_NE(error({"-cbow", "1"}).find("always trains CBOW"), std::string::npos);
}

TEST(Config, InitFromIsANewRun) {
  const char* argv[] = {"fedavg_mpi", "--init-from", "old/run.h5", "a.txt", nullptr};
  EXPECT_EQ(fedavg::core::Config(fedavg::core::parse_command_line(4, const_cast<char**>(argv))).init_from,
            "old/run.h5");
  const char* both[] = {"fedavg_mpi", "--init-from", "old/run.h5", "--resume", "a.txt", nullptr};
  EXPECT_THROW(fedavg::core::parse_command_line(5, const_cast<char**>(both)), InputError);
}

TEST(Config, StrategyDefaultsAreTheOnesThatWorked) {
  const auto s = parse_settings(R"({"data_name": "x", "bpe": 1, "bs": 1, "target": 1, "strategy": "bmuf"})", "c");
  EXPECT_DOUBLE_EQ(s.block_momentum, 0.3);  // 0 would make bmuf fedavg
  EXPECT_DOUBLE_EQ(s.block_lr, 1.0);
  EXPECT_FALSE(s.nesterov);
  EXPECT_NE(error_of(R"({"data_name": "x", "bpe": 1, "bs": 1, "target": 1, "block_lr": 0})")
                .find("\"block_lr\" must be above 0"),
            std::string::npos);
}

TEST(Config, SomethingMustStopTheRun) {
  EXPECT_NE(error_of(R"({"data_name": "x", "bpe": 1, "bs": 1, "target": 0, "max_rounds": 0, "max_seconds": 0})")
                .find("nothing would stop the run"),
            std::string::npos);
  const auto s = parse_settings(
      R"({"data_name": "x", "bpe": 1, "bs": 1, "target": 0, "max_rounds": 0, "max_seconds": 0, "max_epochs": 2})", "c");
  EXPECT_DOUBLE_EQ(s.max_epochs, 2.0);
}

TEST(Config, HelpListsEveryKeyWithItsDefault) {
  const std::string help = fedavg::core::usage();
  for (const char* key : {"data_name", "bpe", "max_epochs", "strategy", "wait_profile", "max_line_bytes"})
    EXPECT_NE(help.find(std::string("  ") + key + " "), std::string::npos) << key;
  EXPECT_NE(help.find("one of fedavg, bsp, bmuf, diloco, easgd, hogwild"), std::string::npos);
  const auto at = help.find("\n  dim ");
  ASSERT_NE(at, std::string::npos);
  const std::string dim = help.substr(at + 1, help.find('\n', at + 1) - at - 1);
  for (const char* part : {"(integer 1..4096)", " 100 ", "embedding dimension"})
    EXPECT_NE(dim.find(part), std::string::npos) << dim;
}

TEST(Settings, JsonNestedDeeperThanTheBoundIsRefusedWithItsLine) {
  std::string deep;
  for (int i = 0; i < 1000; ++i) deep += "[";
  const std::string text = "{\"data_name\": \"x\", \"bpe\": 1, \"bs\": 1,\n \"target\": 1, \"model_args\": " + deep;
  try {
    parse_settings(text, "cfg.json");
    FAIL() << "a document 1000 arrays deep was accepted";
  } catch (const fedavg::core::InputError& e) {
    EXPECT_STREQ(e.what(), "cfg.json:2: nested deeper than 64 objects or arrays");
  }
  try {
    parse_settings(R"({"data_name": "x", "bpe": 1, "bs": 1, "target": 1})", "cfg.json",
                   {{"model_args", "{\"a\": " + deep, "--set model_args=..."}});
    FAIL() << "an override 1000 arrays deep was accepted";
  } catch (const fedavg::core::InputError& e) {
    EXPECT_STREQ(e.what(), "command line: --set model_args=...: nested deeper than 64 objects or arrays");
  }
}
