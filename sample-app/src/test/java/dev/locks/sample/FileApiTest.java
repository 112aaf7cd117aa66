package dev.locks.sample;

import static org.assertj.core.api.Assertions.assertThat;
import static org.springframework.test.web.servlet.request.MockMvcRequestBuilders.delete;
import static org.springframework.test.web.servlet.request.MockMvcRequestBuilders.get;
import static org.springframework.test.web.servlet.request.MockMvcRequestBuilders.post;
import static org.springframework.test.web.servlet.request.MockMvcRequestBuilders.put;
import static org.springframework.test.web.servlet.result.MockMvcResultMatchers.content;
import static org.springframework.test.web.servlet.result.MockMvcResultMatchers.jsonPath;
import static org.springframework.test.web.servlet.result.MockMvcResultMatchers.status;

import java.time.Duration;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.test.web.servlet.MockMvc;
import org.springframework.test.web.servlet.MvcResult;
import org.springframework.test.web.servlet.setup.MockMvcBuilders;
import org.springframework.web.context.WebApplicationContext;

import dev.locks.LockService;

/** The file server's API, including the seed's conflict cases, on embedded H2. */
@SpringBootTest(properties = { "sample.move-delay-per-entry=150ms", "locks.default-wait=300ms" })
class FileApiTest {

    @Autowired
    private WebApplicationContext context;

    @Autowired
    private LockService locks;

    private MockMvc mvc;

    private String customer;

    @BeforeEach
    void setUp() throws Exception {
        mvc = MockMvcBuilders.webAppContextSetup(context).build();
        customer = "acme-" + UUID.randomUUID().toString().substring(0, 8);
        for (String folder : new String[] { "/Shared", "/Shared/marketing", "/Shared/marketing/Dallas",
                "/Shared/marketing/Austin", "/Shared/QA", "/Shared/Archive" }) {
            folder(folder);
        }
        for (int i = 0; i < 8; i++) {
            upload("/Shared/marketing/Dallas/report-" + i + ".txt", "q" + i).andExpect(status().isOk());
        }
    }

    private void folder(String path) throws Exception {
        mvc.perform(post("/api/customers/{c}/folders", customer).param("path", path)).andExpect(status().isOk());
    }

    private org.springframework.test.web.servlet.ResultActions upload(String path, String text) throws Exception {
        return mvc.perform(put("/api/customers/{c}/files", customer).param("path", path).content(text.getBytes()));
    }

    private CompletableFuture<MvcResult> slowMoveOfDallas() throws Exception {
        CompletableFuture<MvcResult> move = CompletableFuture.supplyAsync(() -> {
            try {
                return mvc.perform(post("/api/customers/{c}/move", customer).param("src", "/Shared/marketing/Dallas")
                        .param("dst", "/Shared/Archive/Dallas")).andReturn();
            }
            catch (Exception ex) {
                throw new IllegalStateException(ex);
            }
        });
        long deadline = System.nanoTime() + Duration.ofSeconds(10).toNanos();
        while (locks.holders(customer, "/Shared/marketing/Dallas").isEmpty()) {
            assertThat(System.nanoTime()).as("the move took its lock").isLessThan(deadline);
            Thread.sleep(10);
        }
        return move;
    }

    @Test
    void filesCanBeUploadedListedAndDownloaded() throws Exception {
        mvc.perform(get("/api/customers/{c}/list", customer).param("path", "/Shared/marketing/Dallas"))
                .andExpect(status().isOk()).andExpect(jsonPath("$.length()").value(8));
        mvc.perform(get("/api/customers/{c}/files", customer).param("path", "/Shared/marketing/Dallas/report-3.txt"))
                .andExpect(status().isOk()).andExpect(content().bytes("q3".getBytes()));
    }

    @Test
    void aMoveOfDallasBlocksAnUploadIntoItAndARenameOfItsParentButNotAnUploadToASibling() throws Exception {
        CompletableFuture<MvcResult> move = slowMoveOfDallas();
        upload("/Shared/marketing/Dallas/x.txt", "late").andExpect(status().isLocked())
                .andExpect(jsonPath("$.error").value("locked"))
                .andExpect(jsonPath("$.holders[0].path").value("/Shared/marketing/Dallas"));
        mvc.perform(post("/api/customers/{c}/rename", customer).param("path", "/Shared/marketing").param("name", "sales"))
                .andExpect(status().isLocked());
        upload("/Shared/QA/y.txt", "free").andExpect(status().isOk());
        upload("/Shared/marketing/Austin/z.txt", "free").andExpect(status().isOk());
        MvcResult moved = move.get(30, TimeUnit.SECONDS);
        assertThat(moved.getResponse().getStatus()).isEqualTo(200);
        assertThat(moved.getResponse().getContentAsString()).contains("\"moved\":9");
        mvc.perform(get("/api/customers/{c}/list", customer).param("path", "/Shared/Archive/Dallas"))
                .andExpect(status().isOk()).andExpect(jsonPath("$.length()").value(8));
        assertThat(locks.holders(customer, "/Shared")).isEmpty();
    }

    @Test
    void anotherCustomerIsNotBlockedByTheMove() throws Exception {
        CompletableFuture<MvcResult> move = slowMoveOfDallas();
        String other = customer + "-other";
        mvc.perform(post("/api/customers/{c}/folders", other).param("path", "/Shared")).andExpect(status().isOk());
        move.get(30, TimeUnit.SECONDS);
    }

    @Test
    void aCopyLeavesTheSourceInPlace() throws Exception {
        mvc.perform(post("/api/customers/{c}/copy", customer).param("src", "/Shared/marketing/Dallas")
                .param("dst", "/Shared/QA/Dallas")).andExpect(status().isOk()).andExpect(jsonPath("$.copied").value(9));
        mvc.perform(get("/api/customers/{c}/files", customer).param("path", "/Shared/QA/Dallas/report-1.txt"))
                .andExpect(content().bytes("q1".getBytes()));
        mvc.perform(get("/api/customers/{c}/list", customer).param("path", "/Shared/marketing/Dallas"))
                .andExpect(jsonPath("$.length()").value(8));
    }

    @Test
    void aDeletedFolderDisappearsWithItsSubtree() throws Exception {
        mvc.perform(delete("/api/customers/{c}/entries", customer).param("path", "/Shared/marketing"))
                .andExpect(status().isOk()).andExpect(jsonPath("$.deleted").value(11));
        mvc.perform(get("/api/customers/{c}/files", customer).param("path", "/Shared/marketing/Dallas/report-1.txt"))
                .andExpect(status().isNotFound());
    }

    @Test
    void dotDotSegmentsAreRejectedWithTheReason() throws Exception {
        upload("/Shared/../etc/passwd", "x").andExpect(status().isBadRequest())
                .andExpect(jsonPath("$.message").value(org.hamcrest.Matchers.containsString("'..'")));
    }

    @Test
    void anUploadIntoAMissingFolderIsNotFound() throws Exception {
        upload("/Nowhere/file.txt", "x").andExpect(status().isNotFound())
                .andExpect(jsonPath("$.message").value("Folder /Nowhere does not exist"));
    }

    @Test
    void aMoveIntoItsOwnSubtreeIsAConflict() throws Exception {
        mvc.perform(post("/api/customers/{c}/move", customer).param("src", "/Shared/marketing")
                .param("dst", "/Shared/marketing/Dallas/inner")).andExpect(status().isConflict())
                .andExpect(jsonPath("$.message").value(org.hamcrest.Matchers.containsString("own subtree")));
    }

    @Test
    void anotherCustomersFilesAreOutOfReach() throws Exception {
        mvc.perform(get("/api/customers/{c}/files", customer + "-intruder")
                .param("path", "/Shared/marketing/Dallas/report-1.txt")).andExpect(status().isNotFound());
    }

    @Test
    void anExportZipsTheFolderUnderAPermitOfTheCustomersSemaphore() throws Exception {
        MvcResult zip = mvc.perform(get("/api/customers/{c}/export", customer).param("path", "/Shared/marketing"))
                .andExpect(status().isOk()).andReturn();
        byte[] bytes = zip.getResponse().getContentAsByteArray();
        assertThat(bytes).startsWith(new byte[] { 'P', 'K' });
        assertThat(locks.holders(customer, "/Shared")).isEmpty();
    }
}
