#pragma once
/// Lets a test keep a fake HttpClient alive after the client that used it is gone (to check
/// what the client did on destruction, e.g. logout).
#include "modules/transport/http_client.h"

namespace plumb::testing {

class ForwardHttp : public transport::HttpClient {
 public:
  explicit ForwardHttp(transport::HttpClient* target) : target_(target) {}
  Result<transport::HttpResponse> Send(const transport::HttpRequest& r) override {
    return target_->Send(r);
  }

 private:
  transport::HttpClient* target_;
};

}  // namespace plumb::testing
