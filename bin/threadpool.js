/* global process */
// librdkafka calls run on libuv's thread pool (4 threads by default). A call that librdkafka never
// returns from pins one thread for good; a larger pool keeps the process serving Kafka meanwhile.
// Imported first by bin/hamstring.js, before anything can start the pool.
process.env.UV_THREADPOOL_SIZE ??= '16';
