/** The switch of one subscriber's poller, in the words of Lambda's event source mapping states. */
export interface ConsumerPoller {
  pause(): void;
  resume(): void;
  readonly state: string;
}
