// Drives a Gremlin Server with gremlin-javascript's defaults (GraphSON 3.0) and prints what it saw as JSON.
// Usage: node client_checks.js ws://host:port/gremlin   (run by tests/graph/server/test_server_graphson.py)
'use strict';
const gremlin = require('gremlin');

const { DriverRemoteConnection, Client } = gremlin.driver;
const { traversal } = gremlin.process.AnonymousTraversalSource;
const { P } = gremlin.process;
const { SubgraphStrategy, PartitionStrategy } = require('gremlin/lib/process/traversal-strategy');
const __ = gremlin.process.statics;

async function statusOf(work) {
  try {
    await work();
    return null;
  } catch (err) {
    return err.statusCode === undefined ? String(err) : err.statusCode;
  }
}

async function main(url) {
  const seen = {};
  const connection = new DriverRemoteConnection(url);
  const client = new Client(url, { traversalSource: 'g' });
  try {
    const g = traversal().withRemote(connection);
    await g.V().drop().iterate();
    const marko = await g.addV('person').property('name', 'marko').property('age', 29).next();
    seen.addVLabel = marko.value.label;
    await g.addV('software').property('name', 'lop').iterate();
    await g.V().has('name', 'marko').as('a').V().has('name', 'lop').addE('created').from_('a').iterate();
    seen.created = await g.V().has('person', 'name', 'marko').out('created').values('name').toList();
    seen.ages = await g.V().hasLabel('person').values('age').toList();
    seen.within = (await g.V().has('name', P.within('marko', 'lop')).count().next()).value;
    const byLabel = await g.V().group().by(__.label()).by(__.count()).next();
    seen.byLabel = Object.fromEntries([...byLabel.value.entries()].sort());
    seen.failStatus = await statusOf(() => g.inject(1).fail('stop here').iterate());
    const script = await client.submit('g.inject(x, y)', { x: 41, y: 'a' });
    seen.script = script.toArray();
    const numbers = Array.from({ length: 300 }, (_, i) => i);
    const batched = await client.submit(`g.inject(${numbers.join(', ')})`, null, { batchSize: 64 });
    seen.batchedInOrder = JSON.stringify(batched.toArray()) === JSON.stringify(numbers);
    seen.scriptErrorStatus = await statusOf(() => client.submit('g.V().foo_no_such_step()'));
    const people = g.withStrategies(new SubgraphStrategy({ vertices: __.hasLabel('person') }));
    seen.subgraph = await people.V().both().values('name').toList();
    const matched = await g.V().match(__.as('a').out('created').as('b')).select('a', 'b').by('name').toList();
    seen.matched = matched.map((m) => Object.fromEntries(m.entries()));
    const tenant = g.withStrategies(
      new PartitionStrategy({ partitionKey: 'tenant', writePartition: 't1', readPartitions: ['t1'] }),
    );
    await tenant.addV('person').property('name', 'ana').iterate();
    seen.tenantNames = await tenant.V().values('name').toList();
  } finally {
    await connection.close();
    await client.close();
  }
  process.stdout.write(JSON.stringify(seen) + '\n');
}

main(process.argv[2]).catch((err) => {
  process.stderr.write(`client checks failed: ${err.stack || err}\n`);
  process.exit(1);
});
