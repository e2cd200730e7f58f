// An Arena bot in C++: a random player, or (--heuristic) a simple rule of thumb, for both games.
//
// It talks the protocol of proto/arena/v1/arena.proto through code that protoc generates at
// build time (`make`; Debian's libgrpc++-dev and protobuf-compiler-grpc). It reads the referee's
// address (HOST:PORT, or unix:PATH for a launched bot) and its token from ARENA_ADDRESS and
// ARENA_TOKEN (the launcher sets both), says Hello on one Referee.Play stream, and answers each
// ActionRequest with one of its legal actions. Its randomness is seeded by each match's bot_seed,
// so a replayed match replays the bot. Reconnects with backoff when the stream drops; exits 1
// when the referee refuses it.
//
// The heuristic (a starting point to improve, not a strong bot):
//   balloon: drop out once the hand's volume fits in what is on the table, else play the
//            highest card (the volume comes down fastest);
//   boom:    play the legal action whose cards add up to the least (keep the high cards).
#include <grpcpp/grpcpp.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdlib>
#include <iostream>
#include <map>
#include <memory>
#include <random>
#include <string>
#include <thread>

#include "arena.grpc.pb.h"

using arena::v1::Action;
using arena::v1::ActionRequest;
using arena::v1::BotMessage;
using arena::v1::Referee;
using arena::v1::RefereeMessage;

namespace {

const char* kName = "cpp-bot";
bool heuristic = false;
std::map<std::string, std::mt19937_64> rngs;  // per match, seeded by its bot_seed

uint32_t total(const google::protobuf::RepeatedPtrField<arena::v1::Card>& cards) {
  uint32_t sum = 0;
  for (const auto& c : cards) sum += c.value();
  return sum;
}

// The index of the legal action the heuristic prefers, or -1 for none (then: random).
int preferred(const ActionRequest& req) {
  const auto& legal = req.legal_actions();
  const auto& obs = req.observation();
  int best = -1;
  if (obs.has_balloon()) {
    const auto& b = obs.balloon();
    uint32_t table = 0;
    for (const auto& p : b.table()) table += p.card().value();
    uint32_t volume = total(b.hand());
    for (int i = 0; i < legal.size(); ++i) {
      const auto& a = legal[i].balloon();
      if (a.has_drop_out() || a.kind_case() == arena::v1::BalloonAction::kDropOut) {
        if (volume <= table) return i;
        continue;
      }
      if (best < 0 || a.play().value() > legal[best].balloon().play().value()) best = i;
    }
  } else if (obs.has_boom()) {
    for (int i = 0; i < legal.size(); ++i) {
      if (best < 0 || total(legal[i].boom().cards()) < total(legal[best].boom().cards())) {
        best = i;
      }
    }
  }
  return best;
}

Action choose(const ActionRequest& req) {
  const auto& legal = req.legal_actions();
  if (legal.empty()) return Action();
  int i = heuristic ? preferred(req) : -1;
  if (i < 0) {
    auto& rng = rngs[req.match_id()];  // a match not started here: seeded with 0
    i = static_cast<int>(rng() % static_cast<uint64_t>(legal.size()));
  }
  return legal[i];
}

// One connection: Hello, then requests until the stream ends. Returns the stream's status.
grpc::Status play(Referee::Stub& stub, const std::string& token, bool& welcomed) {
  grpc::ClientContext context;
  auto stream = stub.Play(&context);
  BotMessage hello;
  auto* h = hello.mutable_hello();
  h->set_token(token);
  h->set_name(kName);
  h->set_protocol_version(1);
  h->set_max_concurrent(1);
  stream->Write(hello);
  RefereeMessage msg;
  while (stream->Read(&msg)) {
    switch (msg.kind_case()) {
      case RefereeMessage::kWelcome:
        welcomed = true;
        std::cerr << kName << ": connected as " << msg.welcome().bot_name() << std::endl;
        break;
      case RefereeMessage::kMatchStart:
        rngs[msg.match_start().match_id()].seed(msg.match_start().bot_seed());
        break;
      case RefereeMessage::kActionRequest: {
        const auto& req = msg.action_request();
        BotMessage reply;
        auto* r = reply.mutable_action();
        r->set_match_id(req.match_id());
        r->set_request_id(req.request_id());
        *r->mutable_action() = choose(req);
        stream->Write(reply);
        break;
      }
      case RefereeMessage::kMatchEnd:
        rngs.erase(msg.match_end().match_id());
        break;
      case RefereeMessage::kRejected:
        std::cerr << kName << ": rejected: " << msg.rejected().detail() << std::endl;
        break;
      default:
        break;  // Pong, or a message newer than this bot
    }
  }
  stream->WritesDone();
  return stream->Finish();
}

}  // namespace

int main(int argc, char** argv) {
  for (int i = 1; i < argc; ++i) {
    if (std::string(argv[i]) == "--heuristic") {
      heuristic = true;
      kName = "cpp-heuristic";
    }
  }
  const char* address = std::getenv("ARENA_ADDRESS");
  const char* token = std::getenv("ARENA_TOKEN");
  if (address == nullptr || token == nullptr) {
    std::cerr << kName << ": set ARENA_ADDRESS (HOST:PORT or unix:PATH) and ARENA_TOKEN"
              << std::endl;
    return 2;
  }
  grpc::ChannelArguments args;
  args.SetInt(GRPC_ARG_KEEPALIVE_TIME_MS, 20000);
  args.SetInt(GRPC_ARG_KEEPALIVE_TIMEOUT_MS, 10000);
  args.SetInt(GRPC_ARG_HTTP2_MAX_PINGS_WITHOUT_DATA, 0);
  auto channel = grpc::CreateCustomChannel(address, grpc::InsecureChannelCredentials(), args);
  auto stub = Referee::NewStub(channel);
  int attempt = 0;
  std::mt19937 jitter(std::random_device{}());
  while (true) {
    bool welcomed = false;
    grpc::Status status = play(*stub, token, welcomed);
    auto code = status.error_code();
    // Refusals a retry cannot fix: an unknown or rotated token, a suspended bot, a protocol
    // version the referee does not speak.
    if (code == grpc::StatusCode::UNAUTHENTICATED || code == grpc::StatusCode::PERMISSION_DENIED ||
        code == grpc::StatusCode::FAILED_PRECONDITION) {
      std::cerr << kName << ": the referee refused this bot: " << status.error_message()
                << std::endl;
      return 1;
    }
    if (welcomed) attempt = 0;
    rngs.clear();
    int delay_ms = std::min(30000, 500 << std::min(attempt, 6));
    ++attempt;
    std::cerr << kName << ": stream ended (" << code << ": " << status.error_message()
              << "); reconnecting" << std::endl;
    std::this_thread::sleep_for(std::chrono::milliseconds(
        delay_ms / 2 + static_cast<int>(jitter() % static_cast<unsigned>(delay_ms / 2 + 1))));
  }
}
