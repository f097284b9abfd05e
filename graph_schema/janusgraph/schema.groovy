// generated from graph_schema/schema.yaml by `lineage graph init --print-janusgraph` — do not edit

mgmt = graph.openManagement()
if (!mgmt.containsPropertyKey('guid')) mgmt.makePropertyKey('guid').dataType(String.class).cardinality(org.janusgraph.core.Cardinality.SINGLE).make()
if (!mgmt.containsPropertyKey('name')) mgmt.makePropertyKey('name').dataType(String.class).cardinality(org.janusgraph.core.Cardinality.SINGLE).make()
if (!mgmt.containsPropertyKey('typeName')) mgmt.makePropertyKey('typeName').dataType(String.class).cardinality(org.janusgraph.core.Cardinality.SINGLE).make()
if (!mgmt.containsPropertyKey('qualifiedName')) mgmt.makePropertyKey('qualifiedName').dataType(String.class).cardinality(org.janusgraph.core.Cardinality.SINGLE).make()
if (!mgmt.containsPropertyKey('createTime')) mgmt.makePropertyKey('createTime').dataType(Long.class).cardinality(org.janusgraph.core.Cardinality.SINGLE).make()
if (!mgmt.containsPropertyKey('createBy')) mgmt.makePropertyKey('createBy').dataType(String.class).cardinality(org.janusgraph.core.Cardinality.SINGLE).make()
if (!mgmt.containsPropertyKey('version')) mgmt.makePropertyKey('version').dataType(Integer.class).cardinality(org.janusgraph.core.Cardinality.SINGLE).make()
if (!mgmt.containsPropertyKey('dataType')) mgmt.makePropertyKey('dataType').dataType(String.class).cardinality(org.janusgraph.core.Cardinality.SINGLE).make()
if (!mgmt.containsPropertyKey('datasetKind')) mgmt.makePropertyKey('datasetKind').dataType(String.class).cardinality(org.janusgraph.core.Cardinality.SINGLE).make()
if (!mgmt.containsPropertyKey('partitionBytes')) mgmt.makePropertyKey('partitionBytes').dataType(Long.class).cardinality(org.janusgraph.core.Cardinality.SINGLE).make()
if (!mgmt.containsPropertyKey('retentionDays')) mgmt.makePropertyKey('retentionDays').dataType(Integer.class).cardinality(org.janusgraph.core.Cardinality.SINGLE).make()
if (!mgmt.containsPropertyKey('operation')) mgmt.makePropertyKey('operation').dataType(String.class).cardinality(org.janusgraph.core.Cardinality.SINGLE).make()
if (!mgmt.containsPropertyKey('queryText')) mgmt.makePropertyKey('queryText').dataType(String.class).cardinality(org.janusgraph.core.Cardinality.SINGLE).make()
if (!mgmt.containsPropertyKey('user')) mgmt.makePropertyKey('user').dataType(String.class).cardinality(org.janusgraph.core.Cardinality.SINGLE).make()
if (!mgmt.containsPropertyKey('startTime')) mgmt.makePropertyKey('startTime').dataType(String.class).cardinality(org.janusgraph.core.Cardinality.SINGLE).make()
if (!mgmt.containsPropertyKey('endTime')) mgmt.makePropertyKey('endTime').dataType(String.class).cardinality(org.janusgraph.core.Cardinality.SINGLE).make()
if (!mgmt.containsPropertyKey('host')) mgmt.makePropertyKey('host').dataType(String.class).cardinality(org.janusgraph.core.Cardinality.SINGLE).make()
if (!mgmt.containsPropertyKey('cluster')) mgmt.makePropertyKey('cluster').dataType(String.class).cardinality(org.janusgraph.core.Cardinality.SINGLE).make()
if (!mgmt.containsPropertyKey('engine')) mgmt.makePropertyKey('engine').dataType(String.class).cardinality(org.janusgraph.core.Cardinality.SINGLE).make()
if (!mgmt.containsPropertyKey('job')) mgmt.makePropertyKey('job').dataType(String.class).cardinality(org.janusgraph.core.Cardinality.SINGLE).make()
if (!mgmt.containsPropertyKey('queue')) mgmt.makePropertyKey('queue').dataType(String.class).cardinality(org.janusgraph.core.Cardinality.SINGLE).make()
if (!mgmt.containsPropertyKey('status')) mgmt.makePropertyKey('status').dataType(String.class).cardinality(org.janusgraph.core.Cardinality.SINGLE).make()
if (!mgmt.containsPropertyKey('source')) mgmt.makePropertyKey('source').dataType(String.class).cardinality(org.janusgraph.core.Cardinality.SINGLE).make()
if (!mgmt.containsPropertyKey('predicates')) mgmt.makePropertyKey('predicates').dataType(String.class).cardinality(org.janusgraph.core.Cardinality.SINGLE).make()
if (!mgmt.containsPropertyKey('propagate')) mgmt.makePropertyKey('propagate').dataType(Boolean.class).cardinality(org.janusgraph.core.Cardinality.SINGLE).make()
if (!mgmt.containsPropertyKey('process')) mgmt.makePropertyKey('process').dataType(String.class).cardinality(org.janusgraph.core.Cardinality.SINGLE).make()
if (!mgmt.containsPropertyKey('strength')) mgmt.makePropertyKey('strength').dataType(String.class).cardinality(org.janusgraph.core.Cardinality.SINGLE).make()
if (!mgmt.containsPropertyKey('transform')) mgmt.makePropertyKey('transform').dataType(String.class).cardinality(org.janusgraph.core.Cardinality.SINGLE).make()
if (!mgmt.containsPropertyKey('keyPath')) mgmt.makePropertyKey('keyPath').dataType(String.class).cardinality(org.janusgraph.core.Cardinality.SINGLE).make()
if (!mgmt.containsPropertyKey('masking')) mgmt.makePropertyKey('masking').dataType(Boolean.class).cardinality(org.janusgraph.core.Cardinality.SINGLE).make()
if (!mgmt.containsPropertyKey('labelKey')) mgmt.makePropertyKey('labelKey').dataType(String.class).cardinality(org.janusgraph.core.Cardinality.SINGLE).make()
if (!mgmt.containsPropertyKey('labelValue')) mgmt.makePropertyKey('labelValue').dataType(String.class).cardinality(org.janusgraph.core.Cardinality.SINGLE).make()
if (!mgmt.containsPropertyKey('origin')) mgmt.makePropertyKey('origin').dataType(String.class).cardinality(org.janusgraph.core.Cardinality.SINGLE).make()
if (!mgmt.containsPropertyKey('fromName')) mgmt.makePropertyKey('fromName').dataType(String.class).cardinality(org.janusgraph.core.Cardinality.SINGLE).make()
if (!mgmt.containsPropertyKey('fromLabel')) mgmt.makePropertyKey('fromLabel').dataType(String.class).cardinality(org.janusgraph.core.Cardinality.SINGLE).make()
if (!mgmt.containsPropertyKey('via')) mgmt.makePropertyKey('via').dataType(String.class).cardinality(org.janusgraph.core.Cardinality.SINGLE).make()
if (!mgmt.containsPropertyKey('rule')) mgmt.makePropertyKey('rule').dataType(String.class).cardinality(org.janusgraph.core.Cardinality.SINGLE).make()
if (!mgmt.containsPropertyKey('round')) mgmt.makePropertyKey('round').dataType(Integer.class).cardinality(org.janusgraph.core.Cardinality.SINGLE).make()
if (!mgmt.containsPropertyKey('declaredBy')) mgmt.makePropertyKey('declaredBy').dataType(String.class).cardinality(org.janusgraph.core.Cardinality.SINGLE).make()
if (!mgmt.containsVertexLabel('database')) mgmt.makeVertexLabel('database').make()
if (!mgmt.containsVertexLabel('table')) mgmt.makeVertexLabel('table').make()
if (!mgmt.containsVertexLabel('column')) mgmt.makeVertexLabel('column').make()
if (!mgmt.containsVertexLabel('file')) mgmt.makeVertexLabel('file').make()
if (!mgmt.containsVertexLabel('topic')) mgmt.makeVertexLabel('topic').make()
if (!mgmt.containsVertexLabel('process')) mgmt.makeVertexLabel('process').make()
if (!mgmt.containsVertexLabel('run')) mgmt.makeVertexLabel('run').make()
if (!mgmt.containsVertexLabel('partition')) mgmt.makeVertexLabel('partition').make()
if (!mgmt.containsVertexLabel('classification')) mgmt.makeVertexLabel('classification').make()
if (!mgmt.containsEdgeLabel('contains')) mgmt.makeEdgeLabel('contains').multiplicity(org.janusgraph.core.Multiplicity.ONE2MANY).make()
if (!mgmt.containsEdgeLabel('hasColumn')) mgmt.makeEdgeLabel('hasColumn').multiplicity(org.janusgraph.core.Multiplicity.ONE2MANY).make()
if (!mgmt.containsEdgeLabel('usedBy')) mgmt.makeEdgeLabel('usedBy').multiplicity(org.janusgraph.core.Multiplicity.MULTI).make()
if (!mgmt.containsEdgeLabel('generated')) mgmt.makeEdgeLabel('generated').multiplicity(org.janusgraph.core.Multiplicity.MULTI).make()
if (!mgmt.containsEdgeLabel('flowsTo')) mgmt.makeEdgeLabel('flowsTo').multiplicity(org.janusgraph.core.Multiplicity.MULTI).make()
if (!mgmt.containsEdgeLabel('hasRun')) mgmt.makeEdgeLabel('hasRun').multiplicity(org.janusgraph.core.Multiplicity.ONE2MANY).make()
if (!mgmt.containsEdgeLabel('hasPartition')) mgmt.makeEdgeLabel('hasPartition').multiplicity(org.janusgraph.core.Multiplicity.ONE2MANY).make()
if (!mgmt.containsEdgeLabel('taggedWith')) mgmt.makeEdgeLabel('taggedWith').multiplicity(org.janusgraph.core.Multiplicity.MULTI).make()
if (!mgmt.containsGraphIndex('uniqueDatabaseQualifiedName')) {
  idx = mgmt.buildIndex('uniqueDatabaseQualifiedName', Vertex.class).addKey(mgmt.getPropertyKey('qualifiedName')).indexOnly(mgmt.getVertexLabel('database')).unique().buildCompositeIndex()
  mgmt.setConsistency(idx, org.janusgraph.core.schema.ConsistencyModifier.LOCK)
}
if (!mgmt.containsGraphIndex('uniqueTableQualifiedName')) {
  idx = mgmt.buildIndex('uniqueTableQualifiedName', Vertex.class).addKey(mgmt.getPropertyKey('qualifiedName')).indexOnly(mgmt.getVertexLabel('table')).unique().buildCompositeIndex()
  mgmt.setConsistency(idx, org.janusgraph.core.schema.ConsistencyModifier.LOCK)
}
if (!mgmt.containsGraphIndex('uniqueColumnQualifiedName')) {
  idx = mgmt.buildIndex('uniqueColumnQualifiedName', Vertex.class).addKey(mgmt.getPropertyKey('qualifiedName')).indexOnly(mgmt.getVertexLabel('column')).unique().buildCompositeIndex()
  mgmt.setConsistency(idx, org.janusgraph.core.schema.ConsistencyModifier.LOCK)
}
if (!mgmt.containsGraphIndex('uniqueFileQualifiedName')) {
  idx = mgmt.buildIndex('uniqueFileQualifiedName', Vertex.class).addKey(mgmt.getPropertyKey('qualifiedName')).indexOnly(mgmt.getVertexLabel('file')).unique().buildCompositeIndex()
  mgmt.setConsistency(idx, org.janusgraph.core.schema.ConsistencyModifier.LOCK)
}
if (!mgmt.containsGraphIndex('uniqueTopicQualifiedName')) {
  idx = mgmt.buildIndex('uniqueTopicQualifiedName', Vertex.class).addKey(mgmt.getPropertyKey('qualifiedName')).indexOnly(mgmt.getVertexLabel('topic')).unique().buildCompositeIndex()
  mgmt.setConsistency(idx, org.janusgraph.core.schema.ConsistencyModifier.LOCK)
}
if (!mgmt.containsGraphIndex('uniqueProcessQualifiedName')) {
  idx = mgmt.buildIndex('uniqueProcessQualifiedName', Vertex.class).addKey(mgmt.getPropertyKey('qualifiedName')).indexOnly(mgmt.getVertexLabel('process')).unique().buildCompositeIndex()
  mgmt.setConsistency(idx, org.janusgraph.core.schema.ConsistencyModifier.LOCK)
}
if (!mgmt.containsGraphIndex('uniqueRunQualifiedName')) {
  idx = mgmt.buildIndex('uniqueRunQualifiedName', Vertex.class).addKey(mgmt.getPropertyKey('qualifiedName')).indexOnly(mgmt.getVertexLabel('run')).unique().buildCompositeIndex()
  mgmt.setConsistency(idx, org.janusgraph.core.schema.ConsistencyModifier.LOCK)
}
if (!mgmt.containsGraphIndex('uniquePartitionQualifiedName')) {
  idx = mgmt.buildIndex('uniquePartitionQualifiedName', Vertex.class).addKey(mgmt.getPropertyKey('qualifiedName')).indexOnly(mgmt.getVertexLabel('partition')).unique().buildCompositeIndex()
  mgmt.setConsistency(idx, org.janusgraph.core.schema.ConsistencyModifier.LOCK)
}
if (!mgmt.containsGraphIndex('uniqueClassificationQualifiedName')) {
  idx = mgmt.buildIndex('uniqueClassificationQualifiedName', Vertex.class).addKey(mgmt.getPropertyKey('qualifiedName')).indexOnly(mgmt.getVertexLabel('classification')).unique().buildCompositeIndex()
  mgmt.setConsistency(idx, org.janusgraph.core.schema.ConsistencyModifier.LOCK)
}
if (!mgmt.containsGraphIndex('byQualifiedName')) mgmt.buildIndex('byQualifiedName', Vertex.class).addKey(mgmt.getPropertyKey('qualifiedName')).buildCompositeIndex()
if (!mgmt.containsGraphIndex('byGuid')) mgmt.buildIndex('byGuid', Vertex.class).addKey(mgmt.getPropertyKey('guid')).buildCompositeIndex()
if (!mgmt.containsGraphIndex('byName')) mgmt.buildIndex('byName', Vertex.class).addKey(mgmt.getPropertyKey('name')).buildCompositeIndex()
if (!mgmt.containsGraphIndex('search')) mgmt.buildIndex('search', Vertex.class).addKey(mgmt.getPropertyKey('name'), org.janusgraph.core.schema.Mapping.TEXTSTRING.asParameter()).addKey(mgmt.getPropertyKey('qualifiedName'), org.janusgraph.core.schema.Mapping.TEXTSTRING.asParameter()).buildMixedIndex('search')
if (!mgmt.containsRelationIndex(mgmt.getEdgeLabel('flowsTo'), 'flowsToByProcess')) mgmt.buildEdgeIndex(mgmt.getEdgeLabel('flowsTo'), 'flowsToByProcess', Direction.BOTH, mgmt.getPropertyKey('process'))
if (!mgmt.containsRelationIndex(mgmt.getEdgeLabel('taggedWith'), 'taggedWithByOrigin')) mgmt.buildEdgeIndex(mgmt.getEdgeLabel('taggedWith'), 'taggedWithByOrigin', Direction.BOTH, mgmt.getPropertyKey('origin'))
mgmt.commit()
'lineage schema version 1 applied'
