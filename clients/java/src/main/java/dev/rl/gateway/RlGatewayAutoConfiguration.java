package dev.rl.gateway;

import dev.rl.RlCommands;
import io.lettuce.core.AbstractRedisClient;
import io.lettuce.core.RedisClient;
import io.lettuce.core.api.StatefulConnection;
import io.lettuce.core.cluster.RedisClusterClient;
import io.lettuce.core.codec.StringCodec;
import java.util.function.Supplier;
import org.springframework.beans.factory.DisposableBean;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnProperty;
import org.springframework.boot.context.properties.ConfigurationProperties;
import org.springframework.cloud.gateway.filter.ratelimit.RateLimiter;
import org.springframework.cloud.gateway.support.ConfigurationService;
import org.springframework.context.annotation.Bean;
import org.springframework.data.redis.connection.ReactiveRedisConnectionFactory;
import org.springframework.data.redis.connection.lettuce.LettuceConnectionFactory;

/**
 * Registers {@code rlRateLimiter} in a gateway app that has Spring Data Redis on
 * Lettuce. It is not a default candidate for injection by type: upstream's
 * {@code redisRateLimiter} stays the gateway's default, and a route takes rl by
 * naming it ({@code rate-limiter: "#{@rlRateLimiter}"}).
 */
@AutoConfiguration
@ConditionalOnClass({RateLimiter.class, LettuceConnectionFactory.class})
@ConditionalOnProperty(name = "spring.cloud.gateway.server.webflux.rl-rate-limiter.enabled", matchIfMissing = true)
public class RlGatewayAutoConfiguration {

    @Bean(defaultCandidate = false)
    @ConditionalOnMissingBean(RlRateLimiter.class)
    @ConfigurationProperties("spring.cloud.gateway.server.webflux.redis-rate-limiter")
    public RlRateLimiter rlRateLimiter(RlConnection rlConnection, ConfigurationService configurationService) {
        return new RlRateLimiter(rlConnection, configurationService);
    }

    @Bean
    @ConditionalOnMissingBean(RlConnection.class)
    public RlConnection rlConnection(ObjectProvider<ReactiveRedisConnectionFactory> factory) {
        return new RlConnection(factory);
    }

    /**
     * The limiter's own connection, opened on first use from the Lettuce client Spring
     * configured ({@code spring.data.redis.*}: standalone or Cluster), and closed with
     * the context.
     */
    public static final class RlConnection implements Supplier<RlCommands>, DisposableBean {

        private final ObjectProvider<ReactiveRedisConnectionFactory> factory;
        private StatefulConnection<String, String> connection;
        private RlCommands commands;

        RlConnection(ObjectProvider<ReactiveRedisConnectionFactory> factory) {
            this.factory = factory;
        }

        @Override
        public synchronized RlCommands get() {
            if (commands == null) {
                if (!(factory.getIfAvailable() instanceof LettuceConnectionFactory lettuce)) {
                    throw new IllegalStateException("rlRateLimiter needs Spring Data Redis on Lettuce "
                            + "(spring-boot-starter-data-redis-reactive), found " + factory.getIfAvailable());
                }
                AbstractRedisClient client = lettuce.getRequiredNativeClient();
                if (client instanceof RedisClusterClient cluster) {
                    var c = cluster.connect(StringCodec.UTF8);
                    connection = c;
                    commands = RlCommands.of(c);
                } else if (client instanceof RedisClient standalone) {
                    var c = standalone.connect(StringCodec.UTF8);
                    connection = c;
                    commands = RlCommands.of(c);
                } else {
                    throw new IllegalStateException("rlRateLimiter: unknown Lettuce client " + client);
                }
            }
            return commands;
        }

        @Override
        public synchronized void destroy() {
            // Spring may have shut the client down first, closing it already.
            if (connection != null && connection.isOpen()) {
                connection.close();
            }
        }
    }
}
