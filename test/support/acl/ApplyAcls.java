import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.util.ArrayList;
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
 * Adds or removes the ALLOW ACLs of `kafka-acls.sh --add` commands read from stdin (the output of
 * `hamstring acl-plan`; other lines are skipped). The Node binding has no ACL API and the broker's
 * jars have no AclCommand, so tests run this with the broker's own client jars against a listener
 * whose principal is a super user:
 * java -cp '<kafka libs>/*' ApplyAcls.java <bootstrap> <add|remove> < commands
 */
public class ApplyAcls {
  public static void main(String[] args) throws Exception {
    List<AclBinding> bindings = new ArrayList<>();
    BufferedReader in = new BufferedReader(new InputStreamReader(System.in));
    for (String line = in.readLine(); line != null; line = in.readLine()) {
      if (!line.startsWith("kafka-acls.sh ")) continue;
      String[] w = line.trim().split("\\s+");
      String principal = null, operation = null, name = null;
      ResourceType type = null;
      PatternType pattern = PatternType.LITERAL;
      for (int i = 1; i < w.length - 1; i++) {
        switch (w[i]) {
          case "--allow-principal": principal = w[++i]; break;
          case "--operation": operation = w[++i]; break;
          case "--topic": type = ResourceType.TOPIC; name = w[++i]; break;
          case "--group": type = ResourceType.GROUP; name = w[++i]; break;
          case "--transactional-id": type = ResourceType.TRANSACTIONAL_ID; name = w[++i]; break;
          case "--resource-pattern-type": pattern = PatternType.fromString(w[++i].toUpperCase()); break;
          default: break;
        }
      }
      AclOperation op = AclOperation.fromString(operation);
      bindings.add(
          new AclBinding(
              new ResourcePattern(type, name, pattern),
              new AccessControlEntry(principal, "*", op, AclPermissionType.ALLOW)));
    }
    Properties p = new Properties();
    p.put(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, args[0]);
    try (Admin admin = Admin.create(p)) {
      if (args[1].equals("add")) admin.createAcls(bindings).all().get();
      else admin.deleteAcls(bindings.stream().map(AclBinding::toFilter).toList()).all().get();
    }
    System.out.println(args[1] + " " + bindings.size());
  }
}
