package dev.rl.gateway;

import org.springframework.boot.SpringBootConfiguration;
import org.springframework.boot.autoconfigure.EnableAutoConfiguration;
import org.springframework.cloud.gateway.filter.ratelimit.KeyResolver;
import org.springframework.context.annotation.Bean;
import reactor.core.publisher.Mono;

/** The gateway app the tests run: auto-configuration and docs/clients.md's key resolver. */
@SpringBootConfiguration
@EnableAutoConfiguration
public class GatewayApp {

    // docs/clients.md shows this bean; DocsTest checks the two read the same.
    @Bean
    KeyResolver userKeyResolver() {
        return exchange -> Mono.justOrEmpty(exchange.getRequest().getHeaders().getFirst("X-User"));
    }
}
