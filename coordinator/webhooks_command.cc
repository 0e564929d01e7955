// `perfgate-coordinator webhooks`: the endpoints told of regressions,
// triage moves and failed gates (docs/notifications.md), and a view of the
// outbox of their deliveries.
#include <iostream>
#include <string>

#include "absl/strings/str_join.h"
#include "common/exit_codes.h"
#include "coordinator/commands.h"
#include "coordinator/domain/webhook_url.h"

namespace perfgate::coordinator {
namespace {

// One line a delivery: what the outbox knows of it, its last error last.
int ShowOutbox(const CoordinatorConfig& c, Store& store) {
  auto entries = store.ListOutbox(c.outbox);
  if (!entries.ok()) return Fail(entries.status(), "cannot read the outbox");
  std::cout << "id\tendpoint\tevent\tstate\tattempts\tcreated\tlast_attempt\tnext_attempt\tidempotency_key\t"
               "last_error\n";
  for (const store::OutboxEntry& e : *entries) {
    std::cout << e.id << "\t" << e.endpoint << "\t" << e.event_type << "\t" << ToString(e.state) << "\t" << e.attempts
              << "\t" << UtcTime(e.created_at) << "\t" << (e.last_attempt_at ? UtcTime(*e.last_attempt_at) : "-") << "\t"
              << (e.state == store::DeliveryState::kPending ? UtcTime(e.next_attempt_at) : "-") << "\t" << e.idempotency_key << "\t"
              << (e.last_error.empty() ? "-" : e.last_error) << "\n";
  }
  return kExitPass;
}

int Webhooks(const CoordinatorConfig& c, Store& store) {
  switch (c.webhooks) {
    case WebhooksAction::kAdd: {
      auto added = store.AddEndpoint(c.endpoint);
      if (!added.ok()) return Fail(added.status(), "cannot add the webhook");
      std::cerr << "perfgate-coordinator: webhook '" << added->name << "' added: " << absl::StrJoin(added->events, ", ")
                << " on branches " << added->branch << ", SKUs " << added->sku
                << (added->allow_private ? "; private addresses allowed" : "") << "\n";
      return kExitPass;
    }
    case WebhooksAction::kRemove:
      if (auto s = store.RemoveEndpoint(c.endpoint.name); !s.ok()) return Fail(s, "cannot remove the webhook");
      std::cerr << "perfgate-coordinator: webhook '" << c.endpoint.name << "' removed\n";
      return kExitPass;
    case WebhooksAction::kOutbox:
      return ShowOutbox(c, store);
    case WebhooksAction::kList:
      break;
  }
  auto all = store.ListEndpoints();
  if (!all.ok()) return Fail(all.status(), "cannot list webhooks");
  std::cout << "name\turl\tformat\tbranch\tsku\tevents\tallow_private\tadded\n";
  for (const store::NotificationEndpoint& e : *all) {
    std::cout << e.name << "\t" << WithoutUserinfo(e.url) << "\t" << e.format << "\t" << e.branch << "\t" << e.sku
              << "\t" << absl::StrJoin(e.events, ",") << "\t" << (e.allow_private ? "yes" : "no") << "\t"
              << UtcTime(e.created_at) << "\n";
  }
  return kExitPass;
}

}  // namespace

int WebhooksCommand(const CoordinatorConfig& config) {
  int version = 0;
  auto store = OpenStore(config, &version);
  return store.ok() ? Webhooks(config, **store) : kExitError;
}

}  // namespace perfgate::coordinator
