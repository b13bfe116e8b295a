import java.util.List;
import java.util.Properties;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.common.acl.AccessControlEntry;
import org.apache.kafka.common.acl.AclBinding;
import org.apache.kafka.common.acl.AclOperation;
import org.apache.kafka.common.acl.AclPermissionType;
import org.apache.kafka.common.resource.PatternType;
import org.apache.kafka.common.resource.ResourcePattern;
import org.apache.kafka.common.resource.ResourceType;

/**
 * Adds one ACL for User:ANONYMOUS (every client of a PLAINTEXT listener) on resources whose name
 * starts with a prefix. The Node binding has no ACL API, so tests run this with the broker's own
 * client jars:
 * java -cp '<kafka libs>/*' AddAcl.java <bootstrap> <TOPIC|GROUP> <prefix> <OPERATION> <ALLOW|DENY>
 */
public class AddAcl {
  public static void main(String[] args) throws Exception {
    Properties p = new Properties();
    p.put(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, args[0]);
    try (Admin admin = Admin.create(p)) {
      ResourcePattern resource =
          new ResourcePattern(ResourceType.valueOf(args[1]), args[2], PatternType.PREFIXED);
      AccessControlEntry entry =
          new AccessControlEntry(
              "User:ANONYMOUS", "*", AclOperation.valueOf(args[3]), AclPermissionType.valueOf(args[4]));
      admin.createAcls(List.of(new AclBinding(resource, entry))).all().get();
    }
  }
}
