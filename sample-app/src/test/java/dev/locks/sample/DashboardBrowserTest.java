package dev.locks.sample;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.File;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.openqa.selenium.By;
import org.openqa.selenium.OutputType;
import org.openqa.selenium.TakesScreenshot;
import org.openqa.selenium.WebDriver;
import org.openqa.selenium.chrome.ChromeDriver;
import org.openqa.selenium.chrome.ChromeDriverService;
import org.openqa.selenium.chrome.ChromeOptions;
import org.openqa.selenium.support.ui.ExpectedConditions;
import org.openqa.selenium.support.ui.WebDriverWait;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.web.server.LocalServerPort;

/**
 * Drives the live dashboard in headless Chromium (Debian's chromium and chromium-driver, which
 * .ci/run installs) while a slow move runs: the locked path appears, then disappears.
 */
@SpringBootTest(webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT,
        properties = { "sample.move-delay-per-entry=400ms" })
class DashboardBrowserTest {

    @LocalServerPort
    private int port;

    private WebDriver browser;

    private final HttpClient http = HttpClient.newHttpClient();

    @BeforeEach
    void openBrowser() {
        ChromeOptions options = new ChromeOptions();
        options.setBinary(new File("/usr/bin/chromium"));
        options.addArguments("--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
                "--disable-background-networking", "--disable-component-update", "--disable-sync", "--no-first-run",
                "--window-size=1280,900");
        ChromeDriverService service = new ChromeDriverService.Builder()
                .usingDriverExecutable(new File("/usr/bin/chromedriver")).build();
        browser = new ChromeDriver(service, options);
    }

    @AfterEach
    void closeBrowser() {
        if (browser != null) {
            browser.quit();
        }
    }

    private int call(String method, String pathAndQuery, String body) throws Exception {
        HttpRequest request = HttpRequest.newBuilder(URI.create("http://localhost:" + port + pathAndQuery))
                .method(method, body == null ? HttpRequest.BodyPublishers.noBody() : HttpRequest.BodyPublishers.ofString(body))
                .build();
        return http.send(request, HttpResponse.BodyHandlers.discarding()).statusCode();
    }

    @Test
    void theLockOfASlowMoveAppearsOnTheDashboardAndDisappearsAfterIt() throws Exception {
        String base = "/api/customers/globex";
        assertThat(call("POST", base + "/folders?path=/Shared", null)).isEqualTo(200);
        assertThat(call("POST", base + "/folders?path=/Shared/marketing", null)).isEqualTo(200);
        assertThat(call("POST", base + "/folders?path=/Shared/marketing/Dallas", null)).isEqualTo(200);
        for (int i = 0; i < 6; i++) {
            assertThat(call("PUT", base + "/files?path=/Shared/marketing/Dallas/f" + i, "data")).isEqualTo(200);
        }
        browser.get("http://localhost:" + port + "/");
        WebDriverWait wait = new WebDriverWait(browser, Duration.ofSeconds(20));
        wait.until(ExpectedConditions.textToBePresentInElementLocated(By.id("summary"), "node"));

        CompletableFuture<Integer> move = CompletableFuture.supplyAsync(() -> {
            try {
                return call("POST", base + "/move?src=/Shared/marketing/Dallas&dst=/Shared/Dallas", null);
            }
            catch (Exception ex) {
                throw new IllegalStateException(ex);
            }
        });
        By dallasLock = By.cssSelector(".lock[data-path='/Shared/marketing/Dallas'][data-tenant='globex']");
        wait.until(ExpectedConditions.presenceOfElementLocated(dallasLock));
        assertThat(browser.findElement(dallasLock).getText()).contains("exclusive");
        Path shot = Path.of("target", "dashboard.png");
        Files.createDirectories(shot.getParent());
        Files.write(shot, ((TakesScreenshot) browser).getScreenshotAs(OutputType.BYTES));

        assertThat(move.get()).isEqualTo(200);
        wait.until(ExpectedConditions.numberOfElementsToBe(dallasLock, 0));
        assertThat(browser.findElement(By.id("trees")).getText()).doesNotContain("Dallas");
    }
}
