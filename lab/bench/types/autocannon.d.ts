/** The part of autocannon's API the end-to-end benchmark uses (the package ships no types). */
declare module 'autocannon' {
  interface AutocannonRequest {
    method?: string;
    path?: string;
    setupRequest?: (request: Record<string, unknown>, context: Record<string, unknown>) => unknown;
    onResponse?: (
      status: number,
      body: string,
      context: Record<string, unknown>,
      headers: Record<string, string>,
    ) => void;
  }

  interface AutocannonOptions {
    url: string;
    connections?: number;
    duration?: number;
    amount?: number;
    timeout?: number;
    requests?: AutocannonRequest[];
  }

  interface Histogram {
    average: number;
    mean: number;
    stddev: number;
    min: number;
    max: number;
    p50: number;
    p90: number;
    p97_5: number;
    p99: number;
  }

  interface AutocannonResult {
    duration: number;
    latency: Histogram;
    requests: Histogram & { total: number; sent: number };
    errors: number;
    timeouts: number;
    non2xx: number;
    '2xx': number;
  }

  function autocannon(options: AutocannonOptions): Promise<AutocannonResult>;
  export default autocannon;
}
