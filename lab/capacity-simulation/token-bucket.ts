/**
 * The token bucket API Gateway throttles with: `rate` tokens per second up to `burst` tokens, one token per
 * request; a request finding no token is refused (429). "API Gateway throttles requests to your API using the
 * token bucket algorithm, where a token counts for a request."
 * https://docs.aws.amazon.com/apigateway/latest/developerguide/http-api-throttling.html
 */
export class TokenBucket {
  readonly rate: number;
  readonly burst: number;
  #tokens: number;
  #updatedAt: number;

  constructor(rate: number, burst: number, nowMs = 0) {
    this.rate = rate;
    this.burst = burst;
    this.#tokens = burst;
    this.#updatedAt = nowMs;
  }

  #refill(nowMs: number): void {
    if (nowMs > this.#updatedAt) {
      this.#tokens = Math.min(this.burst, this.#tokens + ((nowMs - this.#updatedAt) / 1000) * this.rate);
      this.#updatedAt = nowMs;
    }
  }

  available(nowMs: number): number {
    this.#refill(nowMs);
    return this.#tokens;
  }

  /** Takes `tokens` if the bucket holds them; false (nothing taken) otherwise. */
  take(nowMs: number, tokens = 1): boolean {
    this.#refill(nowMs);
    if (this.#tokens < tokens) return false;
    this.#tokens -= tokens;
    return true;
  }
}

/**
 * API Gateway's account-level throttle per Region: 10,000 requests/s, a burst of 5,000, shared by every API of
 * the account. https://docs.aws.amazon.com/apigateway/latest/developerguide/limits.html
 */
export const API_GATEWAY_ACCOUNT_BURST = 5_000;

/** The route's bucket, then the account's: a request passes when both have a token. */
export class ApiGatewayThrottle {
  readonly #route: TokenBucket;
  readonly #account: TokenBucket;

  constructor(options: { routeRate: number; routeBurst: number; accountRate: number; accountBurst: number }) {
    this.#route = new TokenBucket(options.routeRate, options.routeBurst);
    this.#account = new TokenBucket(options.accountRate, options.accountBurst);
  }

  admit(nowMs: number): boolean {
    if (this.#route.available(nowMs) < 1 || this.#account.available(nowMs) < 1) return false;
    this.#route.take(nowMs);
    this.#account.take(nowMs);
    return true;
  }
}
